import { describe, expect, it } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { Result } from "effect"
import { decodeProtectedHeader, jwtVerify, SignJWT } from "jose"
import {
  type AssertedRequest,
  AssertionType,
  bodyDigest,
  targetDigest,
  signAssertion,
  verificationKeys,
  verifyAssertion
} from "../../src/security/AssertionToken.js"
import { DefaultPorts } from "../../src/config/Ports.js"

const secret = "a-secret-for-assertion-tests-of-32-chars-or-more"
const previous = "the-previous-secret-of-assertion-tests-32-chars+"
const identity = new CallerIdentity({ tenantId: "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f", subject: "sub-1", role: "tenant-admin", scope: "write" })
const signedAtMs = 1_800_000_000_000
const body = JSON.stringify({ email: "new.member@example.com", arbRole: "viewer" })
const request: AssertedRequest = { audience: "provisioning", method: "POST", target: "/api/v1/tenant/invitations?notify=1", body }

const sign = (overrides: Partial<AssertedRequest> = {}, key = secret) => signAssertion(key, identity, { ...request, ...overrides }, { nowMs: signedAtMs })
const verify = (token: string | undefined, overrides: Partial<AssertedRequest> = {}, nowMs = signedAtMs + 1_000, secrets: string | ReadonlyArray<string> = secret) =>
  Result.map(verifyAssertion(secrets, token, { ...request, ...overrides }, nowMs), (opened) => opened.identity)

const segments = (token: string) => token.split(".") as [string, string, string]
const claimsOf = (token: string) => JSON.parse(Buffer.from(segments(token)[1], "base64url").toString("utf8"))
/** The token with its claims changed and its signature kept. */
const withClaims = (token: string, change: (claims: Record<string, unknown>) => Record<string, unknown>) => {
  const [header, claims, signature] = segments(token)
  const changed = Buffer.from(JSON.stringify(change(JSON.parse(Buffer.from(claims, "base64url").toString("utf8"))))).toString("base64url")
  return `${header}.${changed}.${signature}`
}

describe("the internal assertion", () => {
  it("is a compact JWS, HS256, explicitly typed, naming its secret by key id", () => {
    const token = sign()
    expect(segments(token)).toHaveLength(3)
    expect(decodeProtectedHeader(token)).toEqual({ alg: "HS256", typ: AssertionType, kid: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/) })
    expect(claimsOf(token)).toEqual({
      sub: "sub-1",
      tenant: identity.tenantId,
      role: "tenant-admin",
      scope: "write",
      aud: "provisioning",
      htm: "POST",
      thd: targetDigest("/api/v1/tenant/invitations?notify=1"),
      bdh: bodyDigest(body),
      iat: signedAtMs / 1000,
      exp: signedAtMs / 1000 + 30,
      jti: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    })
    expect(claimsOf(sign()).jti).not.toBe(claimsOf(token).jti)
  })

  it("verifies for exactly the request it was signed for", () => {
    expect(verify(sign())).toEqual(Result.succeed(identity))
    expect(verify(sign(), { body: Buffer.from(body) })).toEqual(Result.succeed(identity))
  })

  it("can be addressed to every service of DefaultPorts", () => {
    for (const audience of Object.keys(DefaultPorts) as Array<keyof typeof DefaultPorts>) {
      expect([audience, verify(sign({ audience }), { audience })]).toEqual([audience, Result.succeed(identity)])
    }
  })

  it("interoperates with jose in both directions", async () => {
    const key = new TextEncoder().encode(secret)
    const token = sign()
    const { payload } = await jwtVerify(token, key, {
      algorithms: ["HS256"],
      typ: AssertionType,
      audience: "provisioning",
      currentDate: new Date(signedAtMs + 1_000)
    })
    expect(payload.sub).toBe("sub-1")
    const { kid } = decodeProtectedHeader(token)
    const byJose = await new SignJWT({ ...claimsOf(token), jti: "another-id-from-jose-0001" })
      .setProtectedHeader({ alg: "HS256", typ: AssertionType, kid: kid! })
      .sign(key)
    expect(verify(byJose)).toEqual(Result.succeed(identity))
  })

  describe("refuses it when any binding changes", () => {
    const cases: ReadonlyArray<readonly [string, Partial<AssertedRequest>, string]> = [
      ["another service", { audience: "referential" }, "wrong-audience"],
      ["another method", { method: "PUT" }, "wrong-target"],
      ["another path", { target: "/api/v1/tenant/invitations/members?notify=1" }, "wrong-target"],
      ["no query", { target: "/api/v1/tenant/invitations" }, "wrong-target"],
      ["another query", { target: "/api/v1/tenant/invitations?notify=0" }, "wrong-target"],
      ["an extra query parameter", { target: "/api/v1/tenant/invitations?notify=1&x=1" }, "wrong-target"],
      ["a `;` path parameter", { target: "/api/v1/tenant/invitations;x?notify=1" }, "wrong-target"],
      ["a dot segment that resolves to the same path", { target: "/api/v1/tenant/x/../invitations?notify=1" }, "wrong-target"],
      ["an encoded dot segment", { target: "/api/v1/tenant/x/%2e%2e/invitations?notify=1" }, "wrong-target"],
      ["an encoded slash", { target: "/api/v1/tenant%2finvitations?notify=1" }, "wrong-target"],
      ["a trailing slash", { target: "/api/v1/tenant/invitations/?notify=1" }, "wrong-target"],
      ["another body", { body: body.replace("viewer", "tenant-admin") }, "wrong-body"],
      ["one more byte of body", { body: `${body} ` }, "wrong-body"],
      ["no body", { body: undefined }, "wrong-body"]
    ]
    it.each(cases)("%s", (_name, change, failure) => {
      expect(verify(sign(), change)).toEqual(Result.fail(failure))
    })

    it("an empty body is bound too", () => {
      const forNone = sign({ method: "DELETE", target: "/api/v1/tenant/invitations/x", body: undefined })
      expect(verify(forNone, { method: "DELETE", target: "/api/v1/tenant/invitations/x", body: "" })).toEqual(Result.succeed(identity))
      expect(verify(forNone, { method: "DELETE", target: "/api/v1/tenant/invitations/x", body: "{}" })).toEqual(Result.fail("wrong-body"))
    })

    it("a claim changed after signing", () => {
      expect(verify(withClaims(sign(), (claims) => ({ ...claims, tenant: "6e8d0b4f-2c3a-4d7e-9fa0-1b2c3d4e5f60" })))).toEqual(Result.fail("bad-signature"))
      expect(verify(withClaims(sign(), (claims) => ({ ...claims, thd: targetDigest("/api/v1/tenant/invitations/members") })))).toEqual(Result.fail("bad-signature"))
    })
  })

  it("refuses what is missing, malformed or signed otherwise", () => {
    const [header, claims, signature] = segments(sign())
    const none = Buffer.from(JSON.stringify({ alg: "none", typ: AssertionType })).toString("base64url")
    const otherKid = Buffer.from(JSON.stringify({ alg: "HS256", typ: AssertionType, kid: "not-a-known-kid0" })).toString("base64url")
    expect(verify(undefined)).toEqual(Result.fail("missing"))
    expect(verify("")).toEqual(Result.fail("missing"))
    expect(verify(`${header}.${claims}`)).toEqual(Result.fail("malformed"))
    expect(verify(`${header}.${claims}.${signature}.x`)).toEqual(Result.fail("malformed"))
    expect(verify(`${none}.${claims}.`)).toEqual(Result.fail("malformed"))
    expect(verify(`${header}.${claims}.${signature}=`)).toEqual(Result.fail("malformed"))
    expect(verify(`${otherKid}.${claims}.${signature}`)).toEqual(Result.fail("bad-signature"))
    // Another first character: it carries six whole bits of the MAC, so the bytes always differ
    // (two last characters replaced by "AA" left a signature that already ended so unchanged,
    // about once in a thousand runs: the jti is random).
    expect(verify(`${header}.${claims}.${signature.startsWith("A") ? "B" : "A"}${signature.slice(1)}`)).toEqual(Result.fail("bad-signature"))
    expect(verify(sign({}, "another-secret-of-at-least-32-characters!!"))).toEqual(Result.fail("bad-signature"))
  })

  it("lives 30 seconds by the verifier's clock, and no longer than 60 whatever the signer says", () => {
    expect(verify(sign(), {}, signedAtMs + 29_999)).toEqual(Result.succeed(identity))
    expect(verify(sign(), {}, signedAtMs + 30_000)).toEqual(Result.fail("expired"))
    const long = signAssertion(secret, identity, request, { nowMs: signedAtMs, lifetimeSeconds: 3_600 })
    expect(verify(long)).toEqual(Result.fail("malformed"))
    // A signer's clock a little ahead is tolerated; an assertion from the future is not.
    expect(verify(sign(), {}, signedAtMs - 4_000)).toEqual(Result.succeed(identity))
    expect(verify(sign(), {}, signedAtMs - 6_000)).toEqual(Result.fail("malformed"))
  })

  it("during a rotation, verifies with the current or the previous secret, and no third", () => {
    const both = [secret, previous]
    expect(verify(sign({}, previous), {}, signedAtMs, both)).toEqual(Result.succeed(identity))
    expect(verify(sign({}, secret), {}, signedAtMs, both)).toEqual(Result.succeed(identity))
    expect(verify(sign({}, previous), {}, signedAtMs, secret)).toEqual(Result.fail("bad-signature"))
    expect(verify(sign({}, "a-third-secret-of-at-least-32-characters!!"), {}, signedAtMs, both)).toEqual(Result.fail("bad-signature"))
    expect(verificationKeys(both).size).toBe(2)
  })
})
