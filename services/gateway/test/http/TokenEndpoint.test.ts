import { CreatePartnerClientRequest } from "@portfolio/domain"
import { describe, expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { decodeJwt, decodeProtectedHeader } from "jose"
import { createPartnerClient, rotatePartnerSecret, setPartnerClientEnabled } from "../../src/usecases/ManagePartnerClients.js"
import { PartnerClientRepositoryMemory } from "../support/PartnerClientRepositoryMemory.js"
import { TestOperatorCall } from "../support/OperatorCall.js"
import { send, tenantId, withGateway } from "../support/ProxyHarness.js"
import { TestSigningKey } from "../support/SigningKeys.js"

const tokenPath = "/api/v1/oauth/token"
const form = "application/x-www-form-urlencoded"

const newClient = (name: string, scope: "read" | "write" = "write") =>
  createPartnerClient(tenantId, new CreatePartnerClientRequest({ name, scope }), TestOperatorCall)

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

/**
 * A token request, counted against `address` (the harness trusts one X-Forwarded-For hop): the
 * cases with many requests use addresses of their own, so that none spends another's window.
 */
const requestToken = (body: string, headers: Record<string, string> = {}, address = "198.51.100.7") =>
  send(tokenPath, { method: "POST", body, headers: { "content-type": form, "x-forwarded-for": address, ...headers } })

const oauthErrorOf = (answer: { status: number; text: string; headers: Headers }) => ({
  status: answer.status,
  error: JSON.parse(answer.text).error,
  challenge: answer.headers.get("www-authenticate"),
  cacheControl: answer.headers.get("cache-control")
})

describe("POST /api/v1/oauth/token (client credentials)", () => {
  withGateway(Duration.seconds(5))((it) => {
    it.effect("answers a 5-minute ES256 JWT of the client's tenant and scope to HTTP Basic, never cached", () =>
      Effect.gen(function*() {
        const client = yield* newClient("basic-ok", "read")
        const answer = yield* requestToken("grant_type=client_credentials", { authorization: basic(client.clientId, client.clientSecret) })
        expect(answer.status).toBe(200)
        expect(answer.headers.get("cache-control")).toBe("no-store")
        expect(answer.headers.get("content-type")).toContain("application/json")
        expect(answer.headers.get("x-ratelimit-limit")).toBe("25")
        const body = JSON.parse(answer.text)
        expect(body).toEqual({ access_token: body.access_token, token_type: "Bearer", expires_in: 300, scope: "read" })
        expect(decodeProtectedHeader(body.access_token)).toEqual({ alg: "ES256", kid: TestSigningKey.kid, typ: "at+jwt" })
        const claims = decodeJwt(body.access_token)
        expect(claims).toMatchObject({ sub: client.clientId, client_id: client.clientId, tenant_id: tenantId, scope: "read" })
        expect(claims.exp! - claims.iat!).toBe(300)
      }))

    it.effect("takes the credentials in the body too, and a scope narrower than the client's", () =>
      Effect.gen(function*() {
        const client = yield* newClient("body-ok", "write")
        const answer = yield* requestToken(`grant_type=client_credentials&scope=read&client_id=${client.clientId}&client_secret=${client.clientSecret}`)
        expect(answer.status).toBe(200)
        expect(JSON.parse(answer.text).scope).toBe("read")
        expect(decodeJwt(JSON.parse(answer.text).access_token).scope).toBe("read")
      }))

    it.effect("invalid_client: 401 with a Basic challenge when Basic was used or nothing was sent, 400 for body credentials", () =>
      Effect.gen(function*() {
        const client = yield* newClient("wrong-secret")
        const wrongBasic = yield* requestToken("grant_type=client_credentials", { authorization: basic(client.clientId, "ap_cs_wrong") })
        expect(oauthErrorOf(wrongBasic)).toEqual({ status: 401, error: "invalid_client", challenge: "Basic realm=\"partners\", charset=\"UTF-8\"", cacheControl: "no-store" })
        const wrongBody = yield* requestToken(`grant_type=client_credentials&client_id=${client.clientId}&client_secret=nope`)
        expect(oauthErrorOf(wrongBody)).toEqual({ status: 400, error: "invalid_client", challenge: null, cacheControl: "no-store" })
        const nothing = yield* requestToken("grant_type=client_credentials")
        expect(oauthErrorOf(nothing)).toMatchObject({ status: 401, error: "invalid_client", challenge: "Basic realm=\"partners\", charset=\"UTF-8\"" })
        const unknown = yield* requestToken("grant_type=client_credentials", { authorization: basic("service-partner-nobody", client.clientSecret) })
        expect(oauthErrorOf(unknown)).toMatchObject({ status: 401, error: "invalid_client" })
        // The same words whatever was wrong: nothing says which client ids exist.
        expect(JSON.parse(unknown.text)).toEqual(JSON.parse(wrongBasic.text))
        const unreadable = yield* requestToken("grant_type=client_credentials", { authorization: "Basic bm8tY29sb24" })
        expect(oauthErrorOf(unreadable)).toMatchObject({ status: 401, error: "invalid_client" })
      }))

    it.effect("invalid_client for an id no client can have (a NUL, 300 characters), answered before any lookup", () =>
      Effect.gen(function*() {
        const memory = yield* PartnerClientRepositoryMemory
        const unknown = yield* requestToken("grant_type=client_credentials", { authorization: basic("service-partner-nobody", "ap_cs_wrong") }, "198.51.100.12")
        // With the store down, an id that reached it would answer 503: these never do.
        yield* memory.setDown(true)
        const answers = yield* Effect.forEach(["x\u0000", "\u0000", "a".repeat(300), "service-partner-erp\u0000", "Service-Partner-Erp"], (id) =>
          Effect.all([
            requestToken(`grant_type=client_credentials&client_id=${encodeURIComponent(id)}&client_secret=ap_cs_wrong`, {}, "198.51.100.12"),
            requestToken("grant_type=client_credentials", { authorization: basic(id, "ap_cs_wrong") }, "198.51.100.12")
          ]).pipe(Effect.map(([inBody, byBasic]) => ({ id, inBody: oauthErrorOf(inBody), byBasic: oauthErrorOf(byBasic), texts: [inBody.text, byBasic.text] })))
        ).pipe(Effect.ensuring(memory.setDown(false)))
        for (const { byBasic, id, inBody, texts } of answers) {
          expect({ id, inBody, byBasic }).toEqual({
            id,
            inBody: { status: 400, error: "invalid_client", challenge: null, cacheControl: "no-store" },
            byBasic: { status: 401, error: "invalid_client", challenge: "Basic realm=\"partners\", charset=\"UTF-8\"", cacheControl: "no-store" }
          })
          // The words of an unknown client: nothing tells the two apart.
          for (const text of texts) expect(JSON.parse(text)).toEqual(JSON.parse(unknown.text))
        }
      }))

    it.effect("invalid_client for a disabled client, until it is enabled again", () =>
      Effect.gen(function*() {
        const client = yield* newClient("switched")
        yield* setPartnerClientEnabled(client.clientId, false, TestOperatorCall)
        const refused = yield* requestToken("grant_type=client_credentials", { authorization: basic(client.clientId, client.clientSecret) })
        expect(oauthErrorOf(refused)).toMatchObject({ status: 401, error: "invalid_client" })
        yield* setPartnerClientEnabled(client.clientId, true, TestOperatorCall)
        expect((yield* requestToken("grant_type=client_credentials", { authorization: basic(client.clientId, client.clientSecret) })).status).toBe(200)
      }))

    it.effect("accepts the previous secret during a rotation's grace, and not without one", () =>
      Effect.gen(function*() {
        const client = yield* newClient("rotated")
        const rotated = yield* rotatePartnerSecret(client.clientId, 3600, TestOperatorCall)
        for (const secret of [client.clientSecret, rotated.clientSecret]) {
          expect((yield* requestToken("grant_type=client_credentials", { authorization: basic(client.clientId, secret) })).status).toBe(200)
        }
        const again = yield* rotatePartnerSecret(client.clientId, 0, TestOperatorCall)
        expect((yield* requestToken("grant_type=client_credentials", { authorization: basic(client.clientId, rotated.clientSecret) })).status).toBe(401)
        expect((yield* requestToken("grant_type=client_credentials", { authorization: basic(client.clientId, again.clientSecret) })).status).toBe(200)
      }))

    it.effect("invalid_scope: a scope beyond the client's, or one that does not exist", () =>
      Effect.gen(function*() {
        const client = yield* newClient("reader", "read")
        const auth = { authorization: basic(client.clientId, client.clientSecret) }
        for (const scope of ["write", "read%20write", "admin", "read%20%20write"]) {
          const answer = yield* requestToken(`grant_type=client_credentials&scope=${scope}`, auth, "198.51.100.9")
          expect({ scope, ...oauthErrorOf(answer) }).toEqual({ scope, status: 400, error: "invalid_scope", challenge: null, cacheControl: "no-store" })
        }
      }))

    it.effect("unsupported_grant_type for any grant but client_credentials", () =>
      Effect.gen(function*() {
        const client = yield* newClient("granter")
        for (const grant of ["password", "authorization_code", "refresh_token"]) {
          const answer = yield* requestToken(`grant_type=${grant}`, { authorization: basic(client.clientId, client.clientSecret) }, "198.51.100.10")
          expect(oauthErrorOf(answer)).toMatchObject({ status: 400, error: "unsupported_grant_type" })
        }
      }))

    it.effect("invalid_request: no grant_type, a repeated parameter, two authentications, a body that is not a form", () =>
      Effect.gen(function*() {
        const client = yield* newClient("malformed")
        const auth = { authorization: basic(client.clientId, client.clientSecret) }
        const cases: ReadonlyArray<readonly [string, Record<string, string>]> = [
          ["scope=read", auth],
          ["grant_type=client_credentials&grant_type=client_credentials", auth],
          [`grant_type=client_credentials&client_secret=${client.clientSecret}`, auth],
          ["grant_type=client_credentials&client_id=service-partner-other", auth],
          [JSON.stringify({ grant_type: "client_credentials" }), { ...auth, "content-type": "application/json" }]
        ]
        for (const [body, headers] of cases) {
          const answer = yield* requestToken(body, headers, "198.51.100.11")
          expect({ body, ...oauthErrorOf(answer) }).toEqual({ body, status: 400, error: "invalid_request", challenge: null, cacheControl: "no-store" })
          expect(JSON.parse(answer.text).error_description).toEqual(expect.any(String))
        }
      }))

    it.effect("answers 503 with Retry-After, not an OAuth error, while the client store cannot be reached", () =>
      Effect.gen(function*() {
        const client = yield* newClient("store-down")
        const memory = yield* PartnerClientRepositoryMemory
        yield* memory.setDown(true)
        const answer = yield* requestToken("grant_type=client_credentials", { authorization: basic(client.clientId, client.clientSecret) }, "198.51.100.8").pipe(
          Effect.ensuring(memory.setDown(false))
        )
        expect(answer.status).toBe(503)
        expect(answer.headers.get("retry-after")).toBe("5")
        expect(JSON.parse(answer.text)).toMatchObject({ errorCode: "UNAVAILABLE", instance: tokenPath })
      }))

    it.effect("publishes the public keys at /.well-known/jwks.json with their kid, never a private part", () =>
      Effect.gen(function*() {
        const answer = yield* send("/api/v1/.well-known/jwks.json")
        expect(answer.status).toBe(200)
        expect(answer.headers.get("content-type")).toBe("application/jwk-set+json")
        expect(JSON.parse(answer.text)).toEqual({
          keys: [{ kty: "EC", crv: "P-256", x: TestSigningKey.x, y: (TestSigningKey as { y: string }).y, kid: TestSigningKey.kid, alg: "ES256", use: "sig" }]
        })
        expect(answer.text).not.toContain(TestSigningKey.d)
      }))
  })
})
