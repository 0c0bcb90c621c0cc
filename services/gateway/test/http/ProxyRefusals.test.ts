import { describe, expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { errorsUrl, expectRateLimitHeaders, Harness, issue, problem, rawRequest, send, withGateway } from "../support/ProxyHarness.js"

describe("public proxy: the gateway's own refusals", () => {
  withGateway(Duration.millis(500))((it) => {
    it.effect("answers 401 with a problem body and the per-address limit headers", () =>
      Effect.gen(function*() {
        const missing = yield* send("/api/v1/referentiel/applications")
        expect(missing.status).toBe(401)
        expect(missing.headers.get("content-type")).toBe("application/problem+json")
        expect(missing.headers.get("www-authenticate")).toBe("Bearer realm=\"api\"")
        expect(JSON.parse(missing.text)).toEqual(
          problem(
            "UNAUTHENTICATED",
            "unauthenticated",
            "Unauthenticated",
            401,
            "The request has no Authorization header; send 'Authorization: Bearer <personal access token>'.",
            "/api/v1/referentiel/applications"
          )
        )
        expectRateLimitHeaders(missing, 25)
        const emptyBearer = yield* send("/api/v1/referentiel/applications", { headers: { authorization: "Bearer " } })
        expect(JSON.parse(emptyBearer.text).detail).toBe("The Authorization header has the Bearer scheme but no token.")
        const basic = yield* send("/api/v1/tenant/invitations", { headers: { authorization: "Basic dXNlcjpwYXNz" } })
        expect(JSON.parse(basic.text)).toMatchObject({ errorCode: "UNAUTHENTICATED", instance: "/api/v1/tenant/invitations" })
      }))
    it.effect("answers 403 naming the token's scope and the required one, and the missing role", () =>
      Effect.gen(function*() {
        const readAdmin = yield* issue("tenant-admin", "read")
        const answer = yield* send("/api/v1/tenant/invitations", {
          method: "POST",
          token: readAdmin,
          headers: { "content-type": "application/json" },
          body: "{}"
        })
        expect(answer.status).toBe(403)
        expect(JSON.parse(answer.text)).toEqual(
          problem(
            "INSUFFICIENT_SCOPE",
            "invalid-scope",
            "Insufficient scope",
            403,
            "token scope 'read' does not allow POST /tenant/invitations, which requires 'write'",
            "/api/v1/tenant/invitations"
          )
        )
        expectRateLimitHeaders(answer, 5)
        const contributor = yield* issue("contributor", "write")
        const role = yield* send("/api/v1/tenant/invitations/members/auth0%7C1", { method: "DELETE", token: contributor })
        expect(role.status).toBe(403)
        expect(JSON.parse(role.text).detail).toBe(
          "DELETE /tenant/invitations/members/auth0%7C1 requires the token holder to have the role 'tenant-admin' in the tenant; the holder has 'contributor'"
        )
      }))
    it.effect("answers 404 for anything outside the public list, admin paths included", () =>
      Effect.gen(function*() {
        const token = yield* issue("tenant-admin", "write")
        const put = yield* send("/api/v1/referentiel/applications/CRM-01", { method: "PUT", token, body: "{}" })
        expect(put.status).toBe(404)
        expect(JSON.parse(put.text)).toEqual(
          problem(
            "NOT_FOUND",
            "not-found",
            "Not found",
            404,
            "PUT /api/v1/referentiel/applications/CRM-01 is not an endpoint of the public API.",
            "/api/v1/referentiel/applications/CRM-01"
          )
        )
        expect(put.headers.get("x-ratelimit-remaining")).toBe("4")
        const admin = yield* send("/admin/pats", { method: "POST", token, body: "{}" })
        expect(admin.status).toBe(404)
        expect(JSON.parse(admin.text)).toMatchObject({ errorCode: "NOT_FOUND", instance: "/admin/pats" })
        expectRateLimitHeaders(admin, 25)
        const prefixed = yield* send("/api/v1/admin/tenants", { method: "POST", token, body: "{}" })
        expect(JSON.parse(prefixed.text)).toMatchObject({ errorCode: "NOT_FOUND", instance: "/api/v1/admin/tenants" })
      }))
    it.effect("answers 429 with Retry-After consistent with X-RateLimit-Reset once a token is over its limit", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const remaining: Array<string | null> = []
        for (let i = 0; i < 5; i++) remaining.push((yield* send("/api/v1/referentiel/functions/flat", { token })).headers.get("x-ratelimit-remaining"))
        expect(remaining).toEqual(["4", "3", "2", "1", "0"])
        const over = yield* send("/api/v1/referentiel/functions/flat", { token })
        expect(over.status).toBe(429)
        expect(JSON.parse(over.text)).toMatchObject({
          type: `${errorsUrl}/rate-limited`,
          title: "Too many requests",
          status: 429,
          errorCode: "RATE_LIMITED",
          instance: "/api/v1/referentiel/functions/flat"
        })
        expect(over.headers.get("x-ratelimit-remaining")).toBe("0")
        const reset = Number(over.headers.get("x-ratelimit-reset"))
        const retryAfter = Number(over.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(Math.abs(retryAfter - Math.max(1, Math.ceil(reset - over.receivedAtMs / 1000)))).toBeLessThanOrEqual(1)
        expect(JSON.parse(over.text).detail).toBe(`This token made 5 requests in the last 60 seconds, the most allowed; retry after ${retryAfter} seconds.`)
      }))
    it.effect("limits calls without a valid token per address: 429 instead of 401 past the limit", () =>
      Effect.gen(function*() {
        const from = (address: string, token?: string) => ({ headers: { "x-forwarded-for": address }, ...(token === undefined ? {} : { token }) })
        const flooder = "198.51.100.77"
        // Verified once from elsewhere, so the cache holds it when it comes from the flooding address.
        const verified = yield* issue("viewer", "read")
        expect((yield* send("/api/v1/referentiel/functions", from("198.51.100.78", verified))).status).toBe(200)
        let last = yield* send("/api/v1/referentiel/applications", from(flooder, "ap_pat_bogus"))
        while (last.headers.get("x-ratelimit-remaining") !== "0") {
          expect(last.status).toBe(401)
          last = yield* send("/api/v1/referentiel/applications", from(flooder, "ap_pat_bogus"))
        }
        const over = yield* send("/api/v1/referentiel/applications", from(flooder, "ap_pat_bogus"))
        expect(over.status).toBe(429)
        expect(JSON.parse(over.text)).toMatchObject({ errorCode: "RATE_LIMITED" })
        expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        expect(over.headers.get("x-ratelimit-limit")).toBe("25")
        // The documentation pages share the address's budget.
        expect((yield* send("/api/v1/openapi.json", from(flooder))).status).toBe(429)
        // A verified token is counted on its own budget, not the address's.
        const admitted = yield* send("/api/v1/referentiel/functions", from(flooder, verified))
        expect({ status: admitted.status, limit: admitted.headers.get("x-ratelimit-limit") }).toEqual({ status: 200, limit: "5" })
        // One the cache does not hold is not looked up from a spent address (README, "Known limits").
        const unverified = yield* issue("viewer", "read")
        expect((yield* send("/api/v1/referentiel/functions", from(flooder, unverified))).status).toBe(429)
        expect((yield* send("/api/v1/referentiel/functions", { token: unverified })).status).toBe(200)
      }))
    it.effect("refuses bodies over 1 MiB with 413, declared or streamed", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const token = yield* issue("tenant-admin", "write")
        const declared = yield* rawRequest(
          {
            method: "POST",
            path: "/api/v1/tenant/invitations",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(2 * 1024 * 1024) }
          },
          (req) => req.end()
        )
        expect(declared.status).toBe(413)
        expect(JSON.parse(declared.text)).toMatchObject({ errorCode: "PAYLOAD_TOO_LARGE", status: 413, instance: "/api/v1/tenant/invitations" })
        const before = provisioning.seen.length
        const streamed = yield* rawRequest(
          { method: "POST", path: "/api/v1/tenant/invitations", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } },
          (req) => {
            const chunk = Buffer.alloc(64 * 1024, "a")
            let sent = 0
            const pump = () => {
              while (sent < 20) {
                sent++
                if (!req.write(chunk)) return void req.once("drain", pump)
              }
              req.end()
            }
            req.on("error", () => {})
            pump()
          }
        )
        expect(streamed.status).toBe(413)
        expect(JSON.parse(streamed.text)).toMatchObject({ errorCode: "PAYLOAD_TOO_LARGE", detail: "The request body exceeds 1048576 bytes." })
        expect(provisioning.seen.length).toBe(before)
      }))
  })
})
