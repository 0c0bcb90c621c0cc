import { CallerIdentity } from "@portfolio/domain"
import { verifyAssertion } from "@portfolio/platform/security"
import { describe, expect } from "@effect/vitest"
import { Duration, Effect, Layer, References, Result } from "effect"
import { CopiedAnswers } from "../../src/adapters/http/UpstreamForwarderHttp.js"
import { expectRateLimitHeaders, Harness, issue, LargeAnswer, pageLink, rawRequest, send, tenantId, upstreamProblem, withGateway } from "../support/ProxyHarness.js"
import { TestSecret } from "../support/testConfig.js"

describe("public proxy: forwarding to the upstreams", () => {
  withGateway(Duration.millis(500))((it) => {
    it.effect("forwards an admitted call with a verifiable assertion, without the client's credentials", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("architect", "read")
        const before = referential.seen.length
        const answer = yield* send("/api/v1/referentiel/applications?status=ACTIVE&criticality=LOW", {
          token,
          headers: {
            "x-portfolio-assertion": "forged.assertion",
            "x-request-id": "client-chosen-id-1",
            "x-custom": "keep me"
          }
        })
        expect(answer.status).toBe(200)
        expect(JSON.parse(answer.text)).toEqual({ echoed: "/api/v1/referentiel/applications?status=ACTIVE&criticality=LOW" })
        expect(answer.headers.get("x-upstream")).toBe("referential")
        expect(answer.headers.get("x-request-id")).toBe("client-chosen-id-1")
        // The gateway's own limit headers replace whatever the upstream said.
        expect(answer.headers.get("x-ratelimit-limit")).toBe("5")
        expect(answer.headers.get("x-ratelimit-remaining")).toBe("4")
        expectRateLimitHeaders(answer, 5)

        expect(referential.seen.length).toBe(before + 1)
        const seen = referential.seen.at(-1)!
        expect(seen.method).toBe("GET")
        expect(seen.url).toBe("/api/v1/referentiel/applications?status=ACTIVE&criticality=LOW")
        expect(seen.headers["authorization"]).toBeUndefined()
        expect(seen.headers["x-custom"]).toBe("keep me")
        expect(seen.headers["x-request-id"]).toBe("client-chosen-id-1")
        expect(seen.headers["host"]).toBe(referential.url.host)
        const assertion = seen.headers["x-portfolio-assertion"] as string
        const sent = { audience: "referential", method: "GET", target: "/api/v1/referentiel/applications?status=ACTIVE&criticality=LOW" } as const
        expect(Result.map(verifyAssertion(TestSecret, assertion, sent), (opened) => opened.identity)).toEqual(
          Result.succeed(new CallerIdentity({ tenantId, subject: "sub-architect", role: "architect", scope: "read" }))
        )
        // Bound to the service, the method, the target with its query, and the (empty) body.
        expect(verifyAssertion(TestSecret, assertion, { ...sent, target: "/api/v1/referentiel/functions" })).toEqual(Result.fail("wrong-target"))
        expect(verifyAssertion(TestSecret, assertion, { ...sent, target: "/api/v1/referentiel/applications" })).toEqual(Result.fail("wrong-target"))
        expect(verifyAssertion(TestSecret, assertion, { ...sent, audience: "provisioning" })).toEqual(Result.fail("wrong-audience"))
        expect(verifyAssertion(TestSecret, assertion, { ...sent, body: "{}" })).toEqual(Result.fail("wrong-body"))
      }))
    it.effect("passes a list's Link header back as the upstream wrote it, next to the gateway's own headers", () =>
      Effect.gen(function*() {
        const token = yield* issue("architect", "read")
        const answer = yield* send("/api/v1/referentiel/applications?limit=2&status=ACTIVE", { token })
        expect(answer.status).toBe(200)
        expect(answer.headers.get("link")).toBe(pageLink)
        // Relative to the URL the client called, so it holds at the gateway's public address as is.
        expect(new URL(pageLink.slice(1, pageLink.indexOf(">")), "https://api.example.test/api/v1/referentiel/applications?limit=2").href)
          .toBe("https://api.example.test/api/v1/referentiel/applications?status=ACTIVE&limit=2&cursor=eyJ2IjoxfQ")
        expectRateLimitHeaders(answer, 5)
      }))
    it.effect("drops hop-by-hop headers, those named by Connection included", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("architect", "read")
        const answer = yield* rawRequest({
          method: "GET",
          path: "/api/v1/referentiel/functions",
          headers: { authorization: `Bearer ${token}`, connection: "keep-alive, x-hop", "x-hop": "drop me", te: "trailers", "x-kept": "1" }
        })
        expect(answer.status).toBe(200)
        const seen = referential.seen.at(-1)!
        expect(seen.headers["x-hop"]).toBeUndefined()
        expect(seen.headers["te"]).toBeUndefined()
        expect(seen.headers["x-kept"]).toBe("1")
        expect(seen.headers["connection"]).toBe("keep-alive")
      }))
    it.effect("sends a request body to the upstream, with an assertion naming its bytes, and passes its status and body back", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const token = yield* issue("tenant-admin", "write")
        const body = JSON.stringify({ email: "new.member@example.com", arbRole: "viewer" })
        const answer = yield* send("/api/v1/tenant/invitations", {
          method: "POST",
          token,
          headers: { "content-type": "application/json" },
          body
        })
        expect(answer.status).toBe(201)
        expect(JSON.parse(answer.text)).toEqual({ received: body.length })
        const seen = provisioning.seen.at(-1)!
        expect(seen.body).toBe(body)
        expect(seen.headers["content-type"]).toBe("application/json")
        const sent = { audience: "provisioning", method: "POST", target: "/api/v1/tenant/invitations", body } as const
        expect(Result.isSuccess(verifyAssertion(TestSecret, seen.headers["x-portfolio-assertion"] as string, sent))).toBe(true)
        expect(verifyAssertion(TestSecret, seen.headers["x-portfolio-assertion"] as string, { ...sent, body: body.replace("viewer", "tenant-admin") }))
          .toEqual(Result.fail("wrong-body"))
        expect(seen.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
        expect(answer.headers.get("x-request-id")).toBe(seen.headers["x-request-id"])
      }))
    it.effect("reads a chunked body whole, then sends it with its length and an assertion for exactly those bytes", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const token = yield* issue("tenant-admin", "write")
        const parts = ["{\"email\":\"chunked@example.com\",", "\"arbRole\":\"viewer\"}"]
        const answer = yield* rawRequest(
          { method: "POST", path: "/api/v1/tenant/invitations", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } },
          (req) => {
            req.write(parts[0])
            setTimeout(() => req.end(parts[1]), 20)
          }
        )
        expect(answer.status).toBe(201)
        const seen = provisioning.seen.at(-1)!
        const body = parts.join("")
        expect({ url: seen.url, body: seen.body, length: seen.headers["content-length"], chunked: seen.headers["transfer-encoding"] }).toEqual({
          url: "/api/v1/tenant/invitations",
          body,
          length: String(body.length),
          chunked: undefined
        })
        const sent = { audience: "provisioning", method: "POST", target: "/api/v1/tenant/invitations", body } as const
        expect(Result.isSuccess(verifyAssertion(TestSecret, seen.headers["x-portfolio-assertion"] as string, sent))).toBe(true)
      }))
    it.effect("refuses a body that is not UTF-8 with 400, sending nothing upstream", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const token = yield* issue("tenant-admin", "write")
        const before = provisioning.seen.length
        const latin1 = Buffer.from("{\"email\":\"caf\xe9@example.com\",\"arbRole\":\"viewer\"}", "latin1")
        const answer = yield* rawRequest(
          { method: "POST", path: "/api/v1/tenant/invitations", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(latin1.length) } },
          (req) => req.end(latin1)
        )
        expect({ status: answer.status, body: JSON.parse(answer.text) }).toMatchObject({
          status: 400,
          body: { errorCode: "INVALID_REQUEST", detail: "The request body is not valid UTF-8." }
        })
        expect(provisioning.seen.length).toBe(before)
      }))
    it.effect("passes the upstream's problem+json errors through untouched", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const answer = yield* send("/api/v1/referentiel/applications/CRM-404", { token })
        expect(answer.status).toBe(404)
        expect(answer.headers.get("content-type")).toBe("application/problem+json")
        expect(answer.text).toBe(upstreamProblem)
        expectRateLimitHeaders(answer, 5)
      }))
    it.effect("reuses pooled keep-alive connections to the upstream", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("portfolio-manager", "read")
        const before = referential.seen.length
        for (let i = 0; i < 5; i++) expect((yield* send("/api/v1/referentiel/functions", { token })).status).toBe(200)
        const ports = new Set(referential.seen.slice(before).map((r) => r.socketPort))
        expect(ports.size).toBe(1)
      }))
    it.effect("sends a GET again once when its connection breaks before any answer, and never a POST, which could act twice", () =>
      Effect.gen(function*() {
        const { provisioning, referential } = yield* Harness
        const token = yield* issue("tenant-admin", "write")
        const before = referential.seen.length
        const again = yield* send("/api/v1/referentiel/applications/DROP-ONCE", { token })
        expect(again.status).toBe(200)
        expect(referential.seen.slice(before).map((r) => r.url)).toEqual(["/api/v1/referentiel/applications/DROP-ONCE", "/api/v1/referentiel/applications/DROP-ONCE"])
        const posted = provisioning.seen.length
        const once = yield* send("/api/v1/tenant/invitations", { method: "POST", token })
        expect(once.status).toBe(503)
        expect(provisioning.seen.length - posted).toBe(1)
      }))
    it.effect("passes an upstream's 429 with its own window through: its X-RateLimit-* and Retry-After describe the limit that refused", () =>
      Effect.gen(function*() {
        const token = yield* issue("tenant-admin", "write")
        const answer = yield* send("/api/v1/tenant/invitations", {
          method: "POST",
          token,
          headers: { "content-type": "application/json", "x-request-id": "hourly-1" },
          body: JSON.stringify({ email: "over-the-hourly-limit@example.com", arbRole: "viewer" })
        })
        expect(answer.status).toBe(429)
        expect({
          "retry-after": answer.headers.get("retry-after"),
          "x-ratelimit-limit": answer.headers.get("x-ratelimit-limit"),
          "x-ratelimit-remaining": answer.headers.get("x-ratelimit-remaining"),
          "x-ratelimit-reset": answer.headers.get("x-ratelimit-reset")
        }).toEqual({ "retry-after": "3599", "x-ratelimit-limit": "100", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1900000000" })
        expect(answer.headers.get("x-request-id")).toBe("hourly-1")

        // Provisioning says Reset and Retry-After only: the refusing limit has nothing left; its size is not known.
        const resetOnly = yield* send("/api/v1/tenant/invitations", {
          method: "POST",
          token,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "over-the-hourly-limit+reset-only@example.com", arbRole: "viewer" })
        })
        expect({
          status: resetOnly.status,
          "retry-after": resetOnly.headers.get("retry-after"),
          "x-ratelimit-limit": resetOnly.headers.get("x-ratelimit-limit"),
          "x-ratelimit-remaining": resetOnly.headers.get("x-ratelimit-remaining"),
          "x-ratelimit-reset": resetOnly.headers.get("x-ratelimit-reset")
        }).toEqual({ status: 429, "retry-after": "3599", "x-ratelimit-limit": "5", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1900000000" })

        const bare = yield* send("/api/v1/referentiel/functions/limited", { token })
        expect(bare.status).toBe(429)
        expect(bare.headers.get("retry-after")).toBe("7")
        expect(bare.headers.get("x-ratelimit-limit")).toBe("5")
      }))
    it.effect("adds Retry-After to an upstream's 503 that has none, and keeps the upstream's own", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const bare = yield* send("/api/v1/referentiel/functions/busy", { token })
        expect({ status: bare.status, retryAfter: bare.headers.get("retry-after"), body: bare.text }).toEqual({ status: 503, retryAfter: "5", body: "{}" })
        expectRateLimitHeaders(bare, 5)
        const own = yield* send("/api/v1/referentiel/functions/busy-30", { token })
        expect({ status: own.status, retryAfter: own.headers.get("retry-after") }).toEqual({ status: 503, retryAfter: "30" })
      }))
  })
})

describe("public proxy: what it copied through", () => {
  const copied: Array<number> = []
  const listening = Layer.mergeAll(Layer.succeed(References.MinimumLogLevel, "None"), Layer.succeed(CopiedAnswers, (bytes: number) => void copied.push(bytes)))
  withGateway(Duration.millis(500), listening)((it) => {
    it.effect("tells the bytes of each chunk as it is copied, for the young collection that frees the chunks", () =>
      Effect.gen(function*() {
        const token = yield* issue("architect", "read")
        const path = "/api/v1/referentiel/applications/COPIED-1"
        const answer = yield* send(path, { token })
        expect(answer.status).toBe(200)
        expect(copied).toEqual([Buffer.byteLength(JSON.stringify({ echoed: path }))])
        // A refusal of the gateway's own copies nothing.
        expect((yield* send(path)).status).toBe(401)
        expect(copied).toHaveLength(1)
        // An answer of megabytes is told chunk by chunk while it is copied, not once at its end.
        copied.length = 0
        const large = yield* send("/api/v1/referentiel/functions/large", { token })
        expect(large.text).toBe(LargeAnswer)
        expect(copied.length).toBeGreaterThan(1)
        expect(copied.reduce((sum, bytes) => sum + bytes, 0)).toBe(Buffer.byteLength(LargeAnswer))
      }))
  })
})
