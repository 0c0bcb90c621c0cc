import { CallerIdentity, CreatePartnerClientRequest } from "@portfolio/domain"
import { verifyAssertion } from "@portfolio/platform/security"
import { describe, expect } from "@effect/vitest"
import { Duration, Effect, Result } from "effect"
import { base64url, type CryptoKey, decodeJwt, importJWK, SignJWT } from "jose"
import { createPartnerClient } from "../../src/usecases/ManagePartnerClients.js"
import { TestOperatorCall } from "../support/OperatorCall.js"
import { Harness, send, tenantId, withGateway } from "../support/ProxyHarness.js"
import { newSigningKey, TestSigningKey } from "../support/SigningKeys.js"
import { TestSecret } from "../support/testConfig.js"

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`

/** A fresh access token of a client, from the token endpoint. */
const tokenOf = (client: { readonly clientId: string; readonly clientSecret: string }) =>
  Effect.gen(function*() {
    const answer = yield* send("/api/v1/oauth/token", {
      method: "POST",
      body: "grant_type=client_credentials",
      headers: { authorization: basic(client.clientId, client.clientSecret), "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "203.0.113.9" }
    })
    expect(answer.status).toBe(200)
    return JSON.parse(answer.text).access_token as string
  })

/** A partner of the harness's tenant and a fresh access token of it. */
const partnerToken = (name: string, scope: "read" | "write") =>
  Effect.flatMap(createPartnerClient(tenantId, new CreatePartnerClientRequest({ name, scope }), TestOperatorCall), tokenOf)

/** The claims a real token of the gateway would carry, signed by whatever key a case chooses. */
const forge = (claims: Record<string, unknown>, key: CryptoKey, header: { alg: string; kid: string; typ?: string }) =>
  Effect.promise(() =>
    new SignJWT(claims).setProtectedHeader({ typ: "at+jwt", ...header }).sign(key)
  )

const readPath = "/api/v1/referentiel/applications"

describe("public proxy: partner access tokens", () => {
  withGateway(Duration.seconds(5))((it) => {
    it.effect("admits a partner's token: the tenant and scope come from it, asserted as role partner, counted against 600 a minute", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const client = yield* createPartnerClient(tenantId, new CreatePartnerClientRequest({ name: "reader-one", scope: "read" }), TestOperatorCall)
        const token = yield* tokenOf(client)
        const answer = yield* send(readPath, { token })
        expect(answer.status).toBe(200)
        expect(answer.headers.get("x-ratelimit-limit")).toBe("600")
        expect(answer.headers.get("x-ratelimit-remaining")).toBe("599")
        const seen = referential.seen.at(-1)!
        expect(seen.headers["authorization"]).toBeUndefined()
        const opened = verifyAssertion(TestSecret, seen.headers["x-portfolio-assertion"] as string, { audience: "referential", method: "GET", target: readPath })
        expect(Result.map(opened, (o) => o.identity)).toEqual(
          Result.succeed(new CallerIdentity({ tenantId, subject: client.clientId, role: "partner", scope: "read" }))
        )
      }))

    it.effect("refuses a write with a read token (403), and provisioning endpoints to any partner token (403)", () =>
      Effect.gen(function*() {
        const reader = yield* partnerToken("reader-two", "read")
        const write = yield* send("/api/v1/tenant/invitations", { token: reader, method: "POST", body: "{}", headers: { "content-type": "application/json" } })
        expect(write.status).toBe(403)
        expect(JSON.parse(write.text).detail).toBe("token scope 'read' does not allow POST /tenant/invitations, which requires 'write'")
        const writer = yield* partnerToken("writer-one", "write")
        for (const [method, path] of [["GET", "/api/v1/tenant/invitations"], ["GET", "/api/v1/tenant/invitations/members"], ["POST", "/api/v1/tenant/invitations"]] as const) {
          const answer = yield* send(path, { token: writer, method, ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}) })
          expect({ path, status: answer.status, errorCode: JSON.parse(answer.text).errorCode }).toEqual({ path, status: 403, errorCode: "INSUFFICIENT_SCOPE" })
          expect(JSON.parse(answer.text).detail).toBe(
            `${method} ${path.slice("/api/v1".length)} requires the role 'tenant-admin' in the tenant, which a partner client's token never has`
          )
        }
      }))

    it.effect("answers 401 to a token signed by an unknown key, with alg none, or with a tampered payload", () =>
      Effect.gen(function*() {
        const token = yield* partnerToken("victim", "read")
        const claims = decodeJwt(token)
        const stranger = newSigningKey(TestSigningKey.kid)
        const strangerKey = (yield* Effect.promise(() => importJWK({ ...stranger }, "ES256"))) as CryptoKey
        const [header, payload, signature] = token.split(".") as [string, string, string]
        const none = `${base64url.encode(JSON.stringify({ alg: "none", typ: "at+jwt", kid: TestSigningKey.kid }))}.${payload}.`
        const tampered = `${header}.${base64url.encode(JSON.stringify({ ...claims, scope: "write" }))}.${signature}`
        const otherTenant = `${header}.${base64url.encode(JSON.stringify({ ...claims, tenant_id: "00000000-0000-4000-8000-000000000000" }))}.${signature}`
        const cases = {
          "unknown key, same kid": yield* forge(claims, strangerKey, { alg: "ES256", kid: TestSigningKey.kid }),
          "unknown kid": yield* forge(claims, strangerKey, { alg: "ES256", kid: "someone-else" }),
          "alg none": none,
          "alg none without signature part": none.slice(0, -1),
          "tampered scope": tampered,
          "tampered tenant": otherTenant,
          "signature dropped": `${header}.${payload}.`
        }
        for (const [name, forged] of Object.entries(cases)) {
          const answer = yield* send(readPath, { token: forged, headers: { "x-forwarded-for": "192.0.2.200" } })
          expect({ name, status: answer.status, errorCode: JSON.parse(answer.text).errorCode }).toEqual({ name, status: 401, errorCode: "UNAUTHENTICATED" })
        }
        // The genuine token still passes: the refusals were about the forgeries.
        expect((yield* send(readPath, { token })).status).toBe(200)
      }))

    it.effect("answers the 601st request of a partner in a minute 429, whatever token it presents", () =>
      Effect.gen(function*() {
        const client = yield* createPartnerClient(tenantId, new CreatePartnerClientRequest({ name: "busy", scope: "read" }), TestOperatorCall)
        const first = yield* tokenOf(client)
        const statuses = yield* Effect.forEach(
          Array.from({ length: 600 }, (_, i) => i),
          () => Effect.map(send(readPath, { token: first }), (answer) => answer.status),
          { concurrency: 8 }
        )
        expect(statuses.filter((status) => status === 200).length).toBe(600)
        const refused = yield* send(readPath, { token: first })
        expect(refused.status).toBe(429)
        expect(JSON.parse(refused.text).detail).toMatch(/^This partner client made 600 requests in the last 60 seconds, the most allowed; retry after \d+ seconds\.$/)
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        expect(refused.headers.get("x-ratelimit-remaining")).toBe("0")
        // A new token of the same client is counted in the same window: the limit is the client's.
        const second = yield* tokenOf(client)
        expect(second).not.toBe(first)
        expect((yield* send(readPath, { token: second })).status).toBe(429)
      }))
  })
})
