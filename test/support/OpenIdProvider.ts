import { randomBytes } from "node:crypto"
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, UnsecuredJWT, type JWK, type JWTPayload } from "jose"
import Provider, { type Adapter, type AdapterPayload, type Configuration, type KoaContextWithOIDC } from "oidc-provider"

/**
 * A real OpenID Provider (panva's certified `oidc-provider`) on loopback, standing for a tenant's
 * identity provider in the tests of single sign-on: authorization code flow with PKCE (S256 only),
 * `openid email profile groups`, ID tokens signed RS256 (ES256 on request of a client), its own
 * login form instead of the library's development interactions, consent granted without asking.
 */

export interface TestUser {
  readonly sub: string
  readonly email: string
  readonly emailVerified: boolean
  readonly password: string
  readonly groups?: ReadonlyArray<string>
  readonly name?: string
}

export interface TestClient {
  readonly clientId: string
  readonly clientSecret: string
  readonly redirectUris: ReadonlyArray<string>
  /** `client_secret_basic` unless told: oidc-provider accepts only the method a client registered. */
  readonly tokenEndpointAuthMethod?: "client_secret_basic" | "client_secret_post"
  readonly idTokenSignedResponseAlg?: "RS256" | "ES256"
  readonly postLogoutRedirectUris?: ReadonlyArray<string>
}

/** How a rogue ID token is signed: `none` and `HS256` are never issued by this provider, `foreign` keys are not in its JWKS. */
export interface MintOptions {
  readonly alg: "none" | "HS256" | "RS256" | "ES256"
  /**
   * For RS256/ES256: the provider's own current key (a genuine signature over claims it never issued) or a key outside its JWKS.
   * Default `provider`. A foreign key is refused only by a client that checks the signature of the token endpoint's ID token,
   * which openid-client does only with `enableNonRepudiationChecks` (OpenID Connect Core 3.1.3.7 lets it trust TLS instead).
   */
  readonly key?: "provider" | "foreign"
  /** The `kid` header; by default the provider's current key's, so that a foreign key passes for the real one until the signature is checked. */
  readonly kid?: string
  /** HS256 secret; by default the secret of the client the token is for (`aud`), the secret an RP would be tricked into using. */
  readonly secret?: string
  /** Overrides `iss`. */
  readonly issuer?: string
}

export interface Forgery extends MintOptions {
  readonly claims: JWTPayload
}

export interface SignInLogin {
  /** The user's email or sub, as typed in the form's `login` field. */
  readonly login: string
  readonly password: string
}

export interface StartedProvider {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly issuer: string
  readonly clients: ReadonlyMap<string, TestClient>
  readonly users: ReadonlyMap<string, TestUser>
  /** The provider itself, for its events (`provider.on("grant.success", ...)`). It is replaced by `rotateKeys`. */
  readonly provider: Provider
  addClient(client: TestClient): void
  /** Adds or replaces the user of that `sub`; claims are read when each token is issued. */
  setUser(user: TestUser): void
  removeUser(sub: string): void
  /** The JWKS as served at `<issuer>/jwks`. */
  publicJwks(): { keys: Array<JWK> }
  /** Puts new RSA and EC signing keys first in the JWKS and signs with them; the old ones stay published for verification. */
  rotateKeys(): Promise<void>
  /**
   * Plays the browser from the authorization URL to the redirect to the client, by HTTP only, with a cookie
   * jar of its own (so always a fresh sign-in). Returns the callback URL (code, state, iss, or an error) unfollowed.
   * Rejects if the provider refuses the login or answers something else than a redirect or the login form.
   */
  signIn(authorizationUrl: string, login: SignInLogin): Promise<string>
  /** As `signIn`, but the user cancels at the login form: the callback carries `error=access_denied`. */
  cancelSignIn(authorizationUrl: string): Promise<string>
  readonly rogue: {
    /** An ID token the provider never issued; `iss` defaults to the issuer, `iat`/`exp` to now and 5 minutes on. */
    mintIdToken(claims: JWTPayload, options: MintOptions): Promise<string>
    /**
     * The next token endpoint exchange answers, instead of the provider's ID token, the one `forge` makes from
     * its claims (the code is really redeemed and the access token is real). Only that exchange: it disarms itself.
     */
    forgeNextIdToken(forge: (genuine: JWTPayload) => Forgery | Promise<Forgery>): void
  }
  close(): Promise<void>
}

export interface OpenIdProviderOptions {
  readonly clients: ReadonlyArray<TestClient>
  readonly users: ReadonlyArray<TestUser>
}

type PrivateJwk = JWK & { kid: string; alg: "RS256" | "ES256" }

const newSigningKey = async (alg: "RS256" | "ES256"): Promise<PrivateJwk> => {
  const { privateKey } = await generateKeyPair(alg, { extractable: true })
  const jwk = await exportJWK(privateKey)
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg, use: "sig" }
}

const publicPart = ({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest }: JWK): JWK => rest

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (character) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[character]!)

const readBody = (request: IncomingMessage, limit = 64 * 1024) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) request.destroy(new Error("request body too large"))
      else chunks.push(chunk)
    })
    request.on("end", () => resolve(Buffer.concat(chunks)))
    request.on("error", reject)
  })

/** Artefacts the memory adapter files under their grant, so that revoking a grant revokes them. */
const grantable = new Set(["AccessToken", "AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest"])

/**
 * The library's in-memory adapter keeps one store per process and vitest runs many files in one
 * worker; this one lives and dies with its provider, and outlives the Provider instances that
 * `rotateKeys` replaces, so that sessions, interactions and codes survive a rotation.
 */
const adapterFactory = (clientPayload: (clientId: string) => AdapterPayload | undefined) => {
  const entries = new Map<string, { payload: AdapterPayload; expiresAt: number }>()
  const grants = new Map<string, Set<string>>()
  const sessionsByUid = new Map<string, string>()
  const live = (key: string) => {
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= Date.now()) {
      entries.delete(key)
      return undefined
    }
    return entry.payload
  }
  return (model: string): Adapter => {
    const key = (id: string) => `${model}:${id}`
    return {
      async upsert(id, payload, expiresIn) {
        entries.set(key(id), { payload, expiresAt: typeof expiresIn === "number" ? Date.now() + expiresIn * 1000 : Infinity })
        if (model === "Session" && payload.uid !== undefined) sessionsByUid.set(payload.uid, id)
        if (payload.grantId !== undefined && grantable.has(model)) {
          const members = grants.get(payload.grantId) ?? new Set<string>()
          grants.set(payload.grantId, members.add(key(id)))
        }
      },
      async find(id) {
        return model === "Client" ? clientPayload(id) : live(key(id))
      },
      async findByUid(uid) {
        const id = sessionsByUid.get(uid)
        return id === undefined ? undefined : live(key(id))
      },
      async findByUserCode() {
        return undefined
      },
      async consume(id) {
        const payload = live(key(id))
        if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000)
      },
      async destroy(id) {
        const payload = live(key(id))
        entries.delete(key(id))
        if (model === "Session" && payload?.uid !== undefined) sessionsByUid.delete(payload.uid)
      },
      async revokeByGrantId(grantId) {
        for (const member of grants.get(grantId) ?? []) entries.delete(member)
        grants.delete(grantId)
      }
    }
  }
}

const page = (title: string, body: string) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`

const loginPage = (uid: string, clientName: string, loginHint: string, error: string | undefined) =>
  page(
    "Sign in - Test OpenID Provider",
    `<h1>Sign in</h1>
<p>to continue to ${escapeHtml(clientName)}</p>
${error === undefined ? "" : `<p role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
<label>Email <input name="login" type="text" value="${escapeHtml(loginHint)}" autofocus required></label>
<label>Password <input name="password" type="password" required></label>
<button type="submit">Sign in</button>
</form>
<form method="post" action="/interaction/${escapeHtml(uid)}/abort"><button type="submit">Cancel</button></form>`
  )

const loginFormAction = /<form method="post" action="([^"]+\/login)"/

/**
 * A cookie jar by name and path, as a browser keeps them: oidc-provider scopes its interaction
 * cookie to `/interaction/<uid>` and its resume cookie to `/auth/<uid>`, and expires them by date.
 */
class CookieJar {
  readonly #cookies = new Map<string, { readonly name: string; readonly value: string; readonly path: string }>()

  store(url: URL, setCookies: Array<string>) {
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";").map((part) => part.trim())
      const equals = pair.indexOf("=")
      if (equals <= 0) continue
      const name = pair.slice(0, equals)
      const lastSlash = url.pathname.lastIndexOf("/")
      let path = lastSlash > 0 ? url.pathname.slice(0, lastSlash) : "/"
      let expired = false
      for (const attribute of attributes) {
        const [attributeName = "", ...rest] = attribute.split("=")
        const value = rest.join("=")
        const lowered = attributeName.toLowerCase()
        if (lowered === "path" && value.startsWith("/")) path = value
        if (lowered === "max-age" && Number(value) <= 0) expired = true
        if (lowered === "expires" && Date.parse(value) <= Date.now()) expired = true
      }
      const id = `${name}\n${path}`
      if (expired) this.#cookies.delete(id)
      else this.#cookies.set(id, { name, value: pair.slice(equals + 1), path })
    }
  }

  header(url: URL) {
    const matches = [...this.#cookies.values()]
      .filter(({ path }) => url.pathname === path || url.pathname.startsWith(path.endsWith("/") ? path : `${path}/`))
      .sort((a, b) => b.path.length - a.path.length)
    return matches.map(({ name, value }) => `${name}=${value}`).join("; ")
  }
}

export const startOpenIdProvider = async (options: OpenIdProviderOptions): Promise<StartedProvider> => {
  const clients = new Map(options.clients.map((client) => [client.clientId, client]))
  const users = new Map(options.users.map((user) => [user.sub, user]))
  let signingKeys: Array<PrivateJwk> = [await newSigningKey("RS256"), await newSigningKey("ES256")]
  const foreignKeys = { RS256: await newSigningKey("RS256"), ES256: await newSigningKey("ES256") }
  // Signed cookies must stay readable across the Provider instances `rotateKeys` makes.
  const cookieKeys = [randomBytes(32).toString("base64url")]
  // Marks the harness's own replay of a token request, so that it reaches the provider unforged.
  const passthrough = { header: "x-test-op-passthrough", secret: randomBytes(16).toString("hex") }
  let forgery: ((genuine: JWTPayload) => Forgery | Promise<Forgery>) | undefined

  const clientPayload = (clientId: string): AdapterPayload | undefined => {
    const client = clients.get(clientId)
    if (client === undefined) return undefined
    return {
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: [...client.redirectUris],
      post_logout_redirect_uris: [...(client.postLogoutRedirectUris ?? [])],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? "client_secret_basic",
      id_token_signed_response_alg: client.idTokenSignedResponseAlg ?? "RS256"
    }
  }
  const adapter = adapterFactory(clientPayload)

  const findUser = (login: string) => {
    const lowered = login.trim().toLowerCase()
    return users.get(login.trim()) ?? [...users.values()].find((user) => user.email.toLowerCase() === lowered)
  }

  const server: Server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const issuer = `http://127.0.0.1:${port}`

  const configuration = (): Configuration => ({
    adapter,
    jwks: { keys: signingKeys.map((key) => ({ ...key })) },
    cookies: { keys: cookieKeys },
    // Called at each token request, so a user changed by a test (email_verified) shows in the next token, and a removed one gets none.
    findAccount: (_ctx, sub) => {
      const user = users.get(sub)
      if (user === undefined) return undefined
      return {
        accountId: sub,
        claims: () => ({
          sub,
          email: user.email,
          email_verified: user.emailVerified,
          ...(user.name === undefined ? {} : { name: user.name }),
          ...(user.groups === undefined ? {} : { groups: [...user.groups] })
        })
      }
    },
    claims: {
      acr: null,
      auth_time: null,
      iss: null,
      sid: null,
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name"],
      groups: ["groups"]
    },
    scopes: ["openid", "offline_access", "email", "profile", "groups"],
    // Scope claims in the ID token too, not only at userinfo, as the identity providers of tenants (Entra ID, Okta, Google) put them.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    clientAuthMethods: ["client_secret_basic", "client_secret_post"],
    enabledJWA: {
      idTokenSigningAlgValues: ["RS256", "ES256"],
      userinfoSigningAlgValues: ["RS256", "ES256"],
      introspectionSigningAlgValues: ["RS256", "ES256"],
      authorizationSigningAlgValues: ["RS256", "ES256"]
    },
    responseTypes: ["code"],
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      // Keeps discovery to what the product uses; resource indicators would also put audiences on grants.
      resourceIndicators: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) => {
          ctx.type = "html"
          ctx.body = page("Sign out", `<h1>Sign out?</h1>${form}<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button>`)
        },
        postLogoutSuccessSource: (ctx) => {
          ctx.type = "html"
          ctx.body = page("Signed out", "<h1>Signed out</h1>")
        }
      }
    },
    // Explicit lifetimes and pages: the library's defaults print a notice each, in every test's output.
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 3600, Grant: 3600, RefreshToken: 3600 },
    clientBasedCORS: () => false,
    renderError: (ctx: KoaContextWithOIDC, out) => {
      ctx.type = "html"
      ctx.body = page("Error", `<h1>${escapeHtml(String(out.error))}</h1><p>${escapeHtml(String(out.error_description ?? ""))}</p>`)
    }
  })

  const build = () => {
    const instance = new Provider(issuer, configuration())
    instance.on("server_error", (_ctx: unknown, error: Error) => console.error("test OpenID provider: server_error", error))
    return { instance, handle: instance.callback() }
  }
  let current = build()

  const finishWithConsent = async (request: IncomingMessage, response: ServerResponse) => {
    const provider = current.instance
    const details = await provider.interactionDetails(request, response)
    const accountId = details.session?.accountId
    const clientId = String(details.params["client_id"])
    const grant = details.grantId === undefined ? new provider.Grant({ accountId, clientId }) : await provider.Grant.find(details.grantId)
    if (grant === undefined) throw new Error(`grant ${details.grantId} not found`)
    // First-party clients: everything asked is granted, as a tenant's IdP configured for the product would.
    const missing = details.prompt.details as { missingOIDCScope?: Array<string>; missingOIDCClaims?: Array<string> }
    if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(" "))
    if (missing.missingOIDCClaims !== undefined) grant.addOIDCClaims(missing.missingOIDCClaims)
    const grantId = await grant.save()
    await provider.interactionFinished(request, response, { consent: details.grantId === undefined ? { grantId } : {} }, { mergeWithLastSubmission: true })
  }

  const interactions = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    const [, , uid = "", action = ""] = url.pathname.split("/")
    const provider = current.instance
    const details = await provider.interactionDetails(request, response)
    if (details.uid !== uid) throw Object.assign(new Error("interaction does not match its cookie"), { status: 400 })
    const send = (status: number, html: string) =>
      response.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(html)
    const clientName = String(details.params["client_id"])
    if (request.method === "GET" && action === "") {
      if (details.prompt.name === "login") return send(200, loginPage(uid, clientName, String(details.params["login_hint"] ?? ""), undefined))
      if (details.prompt.name === "consent") return finishWithConsent(request, response)
      return send(501, page("Not implemented", `<p>prompt ${escapeHtml(details.prompt.name)}</p>`))
    }
    if (request.method === "POST" && action === "login") {
      const form = new URLSearchParams((await readBody(request)).toString("utf8"))
      const login = form.get("login") ?? ""
      const user = findUser(login)
      if (user === undefined || user.password !== form.get("password")) return send(401, loginPage(uid, clientName, login, "Invalid email or password."))
      return provider.interactionFinished(request, response, { login: { accountId: user.sub, amr: ["pwd"] } }, { mergeWithLastSubmission: false })
    }
    if (request.method === "POST" && action === "abort") {
      return provider.interactionFinished(
        request,
        response,
        { error: "access_denied", error_description: "End-User aborted interaction" },
        { mergeWithLastSubmission: false }
      )
    }
    return send(404, page("Not found", "<p>Not found</p>"))
  }

  const mint = async (claims: JWTPayload, options: MintOptions) => {
    const now = Math.floor(Date.now() / 1000)
    const payload: JWTPayload = { iat: now, exp: now + 300, ...claims, iss: options.issuer ?? claims.iss ?? issuer }
    if (options.alg === "none") return new UnsecuredJWT(payload).encode()
    if (options.alg === "HS256") {
      const audience = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud
      const secret = options.secret ?? (audience === undefined ? undefined : clients.get(audience)?.clientSecret)
      if (secret === undefined) throw new Error("HS256 needs a secret or the aud of a registered client")
      return new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(new TextEncoder().encode(secret))
    }
    const own = signingKeys.find((key) => key.alg === options.alg)!
    const signer = options.key === "foreign" ? foreignKeys[options.alg] : own
    return new SignJWT(payload).setProtectedHeader({ alg: options.alg, kid: options.kid ?? own.kid }).sign(await importJWK(signer, options.alg))
  }

  /** Lets the provider redeem the code (replayed over loopback, since its body was read here), then swaps the ID token. */
  const forgeTokenResponse = async (request: IncomingMessage, response: ServerResponse, forge: NonNullable<typeof forgery>) => {
    const body = await readBody(request)
    const genuine = await new Promise<{ status: number; headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
      const replay = httpRequest(
        { host: "127.0.0.1", port, method: "POST", path: request.url, headers: { ...request.headers, connection: "close", [passthrough.header]: passthrough.secret }, agent: false },
        (answer) => {
          const chunks: Array<Buffer> = []
          answer.on("data", (chunk: Buffer) => chunks.push(chunk))
          answer.on("end", () => resolve({ status: answer.statusCode ?? 500, headers: answer.headers, text: Buffer.concat(chunks).toString("utf8") }))
          answer.on("error", reject)
        }
      )
      replay.on("error", reject)
      replay.end(body)
    })
    const tokens = genuine.status === 200 ? (JSON.parse(genuine.text) as Record<string, unknown>) : undefined
    if (tokens === undefined || typeof tokens["id_token"] !== "string") {
      const contentType = genuine.headers["content-type"] ?? "application/json"
      response.writeHead(genuine.status, { "content-type": contentType, "cache-control": "no-store" }).end(genuine.text)
      return
    }
    const { claims, ...mintOptions } = await forge(decodeJwt(tokens["id_token"]))
    const idToken = await mint(claims, mintOptions)
    response
      .writeHead(200, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", pragma: "no-cache" })
      .end(JSON.stringify({ ...tokens, id_token: idToken }))
  }

  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", issuer)
    const fail = (error: unknown) => {
      // oidc-provider's errors (a missing interaction cookie: SessionNotFound) carry their status and the useful part in error_description.
      const { status = 500, message = String(error), error_description: description } = error as { status?: number; message?: string; error_description?: string }
      if (status >= 500) console.error("test OpenID provider:", error)
      if (!response.headersSent) response.writeHead(status, { "content-type": "text/plain; charset=utf-8" })
      response.end(description === undefined ? message : `${message}: ${description}`)
    }
    if (url.pathname.startsWith("/interaction/")) {
      interactions(request, response, url).catch(fail)
      return
    }
    const forge = forgery
    if (forge !== undefined && request.method === "POST" && url.pathname === "/token" && request.headers[passthrough.header] !== passthrough.secret) {
      forgery = undefined
      forgeTokenResponse(request, response, forge).catch(fail)
      return
    }
    delete request.headers[passthrough.header]
    void current.handle(request, response)
  })

  const browse = async (authorizationUrl: string, submit: (action: URL) => { url: URL; body: URLSearchParams }) => {
    const jar = new CookieJar()
    const origin = new URL(issuer).origin
    const redirectUris = new Set([...clients.values()].flatMap((client) => client.redirectUris))
    let next: { url: URL; body?: URLSearchParams } = { url: new URL(authorizationUrl) }
    let submitted = false
    for (let hop = 0; hop < 20; hop++) {
      const cookie = jar.header(next.url)
      const answer = await fetch(next.url, {
        method: next.body === undefined ? "GET" : "POST",
        redirect: "manual",
        headers: { accept: "text/html", ...(cookie === "" ? {} : { cookie }) },
        ...(next.body === undefined ? {} : { body: next.body })
      })
      jar.store(next.url, answer.headers.getSetCookie())
      const html = await answer.text()
      const location = answer.headers.get("location")
      if (answer.status >= 300 && answer.status < 400 && location !== null) {
        const target = new URL(location, next.url)
        if (target.origin !== origin || redirectUris.has(`${target.origin}${target.pathname}`)) return target.href
        next = { url: target }
        continue
      }
      const action = answer.status === 200 ? loginFormAction.exec(html)?.[1] : undefined
      if (action !== undefined && !submitted) {
        submitted = true
        next = submit(new URL(action, next.url))
        continue
      }
      const text = html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim()
      throw new Error(`the provider answered ${answer.status} at ${next.url.pathname}${submitted ? " after the login was submitted" : ""}: ${text.slice(0, 300)}`)
    }
    throw new Error("more than 20 redirects from the provider")
  }

  return {
    issuer,
    clients,
    users,
    get provider() {
      return current.instance
    },
    addClient: (client) => void clients.set(client.clientId, client),
    setUser: (user) => void users.set(user.sub, user),
    removeUser: (sub) => void users.delete(sub),
    publicJwks: () => ({ keys: signingKeys.map(publicPart) }),
    rotateKeys: async () => {
      // oidc-provider reads its keys once, at construction: a new instance over the same store and cookie keys.
      signingKeys = [await newSigningKey("RS256"), await newSigningKey("ES256"), ...signingKeys]
      current = build()
    },
    signIn: (authorizationUrl, { login, password }) =>
      browse(authorizationUrl, (action) => ({ url: action, body: new URLSearchParams({ login, password }) })),
    cancelSignIn: (authorizationUrl) => browse(authorizationUrl, (action) => ({ url: new URL(action.href.replace(/\/login$/, "/abort")), body: new URLSearchParams() })),
    rogue: {
      mintIdToken: (claims, mintOptions) => mint(claims, mintOptions),
      forgeNextIdToken: (forge) => {
        forgery = forge
      }
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve, reject) => server.close((error) => (error === undefined ? resolve() : reject(error))))
    }
  }
}
