import { decodeProtectedHeader } from "jose"
import {
  allowInsecureRequests,
  authorizationCodeGrant,
  buildAuthorizationUrl,
  calculatePKCECodeChallenge,
  ClientSecretBasic,
  ClientSecretPost,
  discovery,
  enableNonRepudiationChecks,
  randomNonce,
  randomPKCECodeVerifier,
  randomState,
  type Configuration
} from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startOpenIdProvider, type StartedProvider, type TestClient, type TestUser } from "./OpenIdProvider.js"

// Never requested: signIn stops at the redirect to it.
const basic: TestClient = { clientId: "portfolio", clientSecret: "basic-secret-0123456789abcdef0123456789", redirectUris: ["http://127.0.0.1:9/sso/callback"] }
const post: TestClient = {
  clientId: "portfolio-post",
  clientSecret: "post-secret-0123456789abcdef0123456789",
  redirectUris: ["http://127.0.0.1:9/sso/callback-post"],
  tokenEndpointAuthMethod: "client_secret_post",
  idTokenSignedResponseAlg: "ES256"
}
const alice: TestUser = { sub: "alice-1", email: "alice@example.test", emailVerified: true, password: "alice-pw", groups: ["architects", "admins"], name: "Alice Archi" }
const bob: TestUser = { sub: "bob-2", email: "bob@example.test", emailVerified: true, password: "bob-pw" }

let op: StartedProvider

beforeAll(async () => {
  op = await startOpenIdProvider({ clients: [basic, post], users: [alice, bob] })
})

afterAll(async () => {
  await op?.close()
})

/**
 * openid-client checks an ID token's signature only with enableNonRepudiationChecks: by default it
 * trusts the token endpoint's TLS (OpenID Connect Core 3.1.3.7 §6) and would take a token signed by
 * any key. A fresh Configuration is also a fresh JWKS cache, and openid-client refetches the JWKS
 * for an unknown kid only once its copy is 60 s old: the flow after a rotation needs one.
 */
const configure = (client: TestClient) =>
  discovery(
    new URL(op.issuer),
    client.clientId,
    undefined,
    client.tokenEndpointAuthMethod === "client_secret_post" ? ClientSecretPost(client.clientSecret) : ClientSecretBasic(client.clientSecret),
    { execute: [allowInsecureRequests, enableNonRepudiationChecks] }
  )

/** The messages of an error and its causes: openid-client says what it refused in the innermost one. */
const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    const messages: Array<string> = []
    for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) messages.push(cause.message)
    return messages.join(" <- ")
  }
  throw new Error("the forged ID token was accepted")
}

const authorize = async (config: Configuration, client: TestClient, user: TestUser, extra: Record<string, string> = {}) => {
  const verifier = randomPKCECodeVerifier()
  const state = randomState()
  const nonce = randomNonce()
  const url = buildAuthorizationUrl(config, {
    redirect_uri: client.redirectUris[0]!,
    scope: "openid email profile groups",
    code_challenge: await calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...extra
  })
  const callback = await op.signIn(url.href, { login: user.email, password: user.password })
  return { callback, redeem: () => authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce }) }
}

describe("test OpenID provider", () => {
  it("publishes a discovery document limited to S256 and RS256/ES256", async () => {
    const metadata = (await (await fetch(`${op.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
    expect(metadata["issuer"]).toBe(op.issuer)
    expect(metadata["code_challenge_methods_supported"]).toEqual(["S256"])
    expect([...(metadata["id_token_signing_alg_values_supported"] as Array<string>)].sort()).toEqual(["ES256", "RS256"])
    expect(metadata["token_endpoint_auth_methods_supported"]).toEqual(expect.arrayContaining(["client_secret_basic", "client_secret_post"]))
    expect(metadata["scopes_supported"]).toEqual(expect.arrayContaining(["openid", "email", "profile", "groups"]))
    expect(metadata["authorization_response_iss_parameter_supported"]).toBe(true)
    expect(new URL(String(metadata["jwks_uri"])).origin).toBe(op.issuer)
  })

  it("signs a user in through its login form and issues an ID token with email, groups and nonce (client_secret_basic, RS256)", async () => {
    const config = await configure(basic)
    const { callback, redeem } = await authorize(config, basic, alice)
    const returned = new URL(callback)
    expect(`${returned.origin}${returned.pathname}`).toBe(basic.redirectUris[0])
    expect(returned.searchParams.get("iss")).toBe(op.issuer)
    expect(returned.searchParams.get("code")).toBeTruthy()
    const tokens = await redeem()
    expect(tokens.claims()).toMatchObject({
      iss: op.issuer,
      aud: basic.clientId,
      sub: alice.sub,
      email: alice.email,
      email_verified: true,
      groups: ["architects", "admins"],
      name: "Alice Archi"
    })
    expect(tokens.claims()?.nonce).toBeTruthy()
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: "RS256", kid: op.publicJwks().keys[0]!.kid })
  })

  it("reads users at each token (client_secret_post, ES256) and refuses a wrong password, a cancel, a request without PKCE", async () => {
    op.setUser({ ...bob, emailVerified: false })
    const config = await configure(post)
    const tokens = await (await authorize(config, post, bob)).redeem()
    expect(tokens.claims()).toMatchObject({ sub: bob.sub, email: bob.email, email_verified: false })
    expect(tokens.claims()).not.toHaveProperty("groups")
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe("ES256")

    const withPkce = buildAuthorizationUrl(config, {
      redirect_uri: post.redirectUris[0]!,
      scope: "openid",
      code_challenge: await calculatePKCECodeChallenge(randomPKCECodeVerifier()),
      code_challenge_method: "S256"
    })
    await expect(op.signIn(withPkce.href, { login: bob.email, password: "wrong" })).rejects.toThrow(/answered 401 .*Invalid email or password/)
    expect(new URL(await op.cancelSignIn(withPkce.href)).searchParams.get("error")).toBe("access_denied")
    const withoutPkce = buildAuthorizationUrl(config, { redirect_uri: post.redirectUris[0]!, scope: "openid", state: randomState() })
    expect(new URL(await op.signIn(withoutPkce.href, { login: bob.email, password: bob.password })).searchParams.get("error")).toBe("invalid_request")
  })

  it("signs with a new key after rotateKeys, the old one still published", async () => {
    const before = op.publicJwks().keys.map((key) => key.kid)
    await op.rotateKeys()
    const after = op.publicJwks().keys.map((key) => key.kid)
    expect(after.slice(2)).toEqual(before)
    const served = (await (await fetch(`${op.issuer}/jwks`)).json()) as { keys: Array<{ kid: string; d?: string }> }
    expect(served.keys.map((key) => key.kid)).toEqual(after)
    expect(served.keys.some((key) => key.d !== undefined)).toBe(false)
    const tokens = await (await authorize(await configure(basic), basic, alice)).redeem()
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe(after[0])
    expect(tokens.claims()?.sub).toBe(alice.sub)
  })

  describe("forged ID tokens at the token endpoint", () => {
    let config: Configuration
    beforeAll(async () => {
      config = await configure(basic)
    })

    it("passes a re-signed but unchanged token (the forgery itself breaks nothing)", async () => {
      const flow = await authorize(config, basic, alice)
      op.rogue.forgeNextIdToken((claims) => ({ alg: "RS256", claims }))
      expect((await flow.redeem()).claims()?.sub).toBe(alice.sub)
    })

    it.each([
      ["alg none", { alg: "none" } as const, {}, /unexpected JWT "alg" header/],
      ["HS256 with the client secret", { alg: "HS256" } as const, {}, /unexpected JWT "alg" header/],
      ["RS256 with a key outside the JWKS", { alg: "RS256", key: "foreign" } as const, {}, /signature verification failed/],
      ["another issuer", { alg: "RS256" } as const, { iss: "http://127.0.0.1:1" }, /"iss" \(issuer\) claim/],
      ["a wrong nonce", { alg: "RS256" } as const, { nonce: "not-the-one-sent" }, /"nonce" claim/],
      ["email_verified turned true under a key outside the JWKS", { alg: "RS256", key: "foreign" } as const, { email_verified: true }, /signature verification failed/]
    ])("refuses %s", async (_name, options, changes, message) => {
      const flow = await authorize(config, basic, alice)
      op.rogue.forgeNextIdToken((claims) => ({ ...options, claims: { ...claims, ...changes } }))
      expect(await refusal(flow.redeem())).toMatch(message)
      // One exchange only: the next flow gets the provider's own token.
      expect((await (await authorize(config, basic, alice)).redeem()).claims()?.sub).toBe(alice.sub)
    })

    it("mints standalone rogue tokens", async () => {
      const token = await op.rogue.mintIdToken({ sub: alice.sub, aud: basic.clientId }, { alg: "HS256" })
      expect(decodeProtectedHeader(token).alg).toBe("HS256")
      const none = await op.rogue.mintIdToken({ sub: alice.sub, aud: basic.clientId }, { alg: "none", issuer: "http://evil.test" })
      expect(decodeProtectedHeader(none).alg).toBe("none")
    })
  })
})
