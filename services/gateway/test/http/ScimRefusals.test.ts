import { describe, expect } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { verifyAssertion } from "@portfolio/platform/security"
import { Duration, Effect, Result } from "effect"
import { revokeScimToken } from "../../src/usecases/ManageScimTokens.js"
import { type Answer, expectRateLimitHeaders, Harness, issue, issueScim, rawRequest, send, upstreamScimError, withGateway } from "../support/ProxyHarness.js"
import { TestOperatorCall } from "../support/OperatorCall.js"
import { ScimTokenRepositoryMemory } from "../support/ScimTokenRepositoryMemory.js"
import { TestSecret } from "../support/testConfig.js"

/** The exact bytes of a SCIM error (RFC 7644 3.12) as the gateway writes it: no problem+json member, status as a string. */
const scimBody = (status: number, detail: string) =>
  JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: String(status), detail })

const expectScimError = (answer: Pick<Answer, "status" | "text"> & { readonly contentType: string | null }, status: number, detail: string) => {
  expect(answer.status).toBe(status)
  expect(answer.contentType).toBe("application/scim+json")
  expect(answer.text).toBe(scimBody(status, detail))
}

const scimOf = (answer: Answer) => ({ status: answer.status, text: answer.text, contentType: answer.headers.get("content-type") })

/** Each case calls from an address of its own (the harness trusts one proxy hop), so that the per-address limit is its own. */
const from = (address: string, more: Record<string, string> = {}) => ({ headers: { "x-forwarded-for": address, ...more } })

describe("public proxy: the gateway's own answers under /api/v1/scim/v2 are SCIM errors", () => {
  withGateway(Duration.millis(500))((it) => {
    it.effect("401 without a token, or with an unknown or revoked one, keeping WWW-Authenticate, the limit headers and the request id", () =>
      Effect.gen(function*() {
        const missing = yield* send("/api/v1/scim/v2/Users", from("198.51.100.1", { "x-request-id": "scim-401" }))
        expectScimError(scimOf(missing), 401, "The request has no Authorization header; send 'Authorization: Bearer <personal access token>'.")
        expect(missing.headers.get("www-authenticate")).toBe("Bearer realm=\"api\"")
        expect(missing.headers.get("x-request-id")).toBe("scim-401")
        expectRateLimitHeaders(missing, 25)

        const made = yield* issueScim()
        expect((yield* send("/api/v1/scim/v2/Users", { token: made.token })).status).toBe(200)
        yield* revokeScimToken(made.tenantId, made.id, TestOperatorCall)
        const revoked = yield* send("/api/v1/scim/v2/Users", { token: made.token, ...from("198.51.100.2") })
        expectScimError(scimOf(revoked), 401, "The SCIM token has been revoked.")
        expect(revoked.headers.get("www-authenticate")).toBe("Bearer realm=\"api\"")
        const malformed = yield* send("/api/v1/scim/v2/Users", { token: "ap_scim_nope", ...from("198.51.100.2") })
        expectScimError(scimOf(malformed), 401, "The token is not a well-formed SCIM token.")
      }))

    it.effect("403 for a PAT on SCIM; a SCIM token elsewhere is refused in problem+json, the shape of the path it called", () =>
      Effect.gen(function*() {
        const admin = yield* issue("tenant-admin", "write")
        const pat = yield* send("/api/v1/scim/v2/Users", { token: admin })
        expectScimError(
          scimOf(pat),
          403,
          "GET /scim/v2/Users is a SCIM endpoint: it takes a SCIM token (ap_scim_…) made by a tenant-admin, not a personal access token"
        )
        expectRateLimitHeaders(pat, 5)
        const { token } = yield* issueScim()
        const elsewhere = yield* send("/api/v1/referentiel/applications", { token })
        expect(elsewhere.status).toBe(403)
        expect(elsewhere.headers.get("content-type")).toBe("application/problem+json")
        expect(JSON.parse(elsewhere.text)).toMatchObject({
          errorCode: "INSUFFICIENT_SCOPE",
          detail: "a SCIM token is accepted only under /api/v1/scim/v2; GET /referentiel/applications takes a personal access token or a partner client's access token"
        })
      }))

    it.effect("404 for Groups, saying roles are set per User", () =>
      Effect.gen(function*() {
        const { token } = yield* issueScim()
        const groups = yield* send("/api/v1/scim/v2/Groups?filter=displayName%20eq%20%22Admins%22", { token })
        expectScimError(scimOf(groups), 404, "Groups are not supported: roles are set per User, in its 'roles' attribute (see /ResourceTypes).")
        expectRateLimitHeaders(groups, 4)
      }))

    it.effect("429 past the SCIM token's own limit, with Retry-After and X-RateLimit-Remaining: 0", () =>
      Effect.gen(function*() {
        const { token } = yield* issueScim()
        const remaining: Array<string | null> = []
        for (let i = 0; i < 4; i++) remaining.push((yield* send("/api/v1/scim/v2/Users", { token })).headers.get("x-ratelimit-remaining"))
        expect(remaining).toEqual(["3", "2", "1", "0"])
        const over = yield* send("/api/v1/scim/v2/Users", { token })
        const retryAfter = Number(over.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expectScimError(scimOf(over), 429, `This SCIM token made 4 requests in the last 60 seconds, the most allowed; retry after ${retryAfter} seconds.`)
        expect(over.headers.get("x-ratelimit-remaining")).toBe("0")
        expectRateLimitHeaders(over, 4)
      }))

    it.effect("400 for a target it refuses to read, 503 while the token store is down", () =>
      Effect.gen(function*() {
        const target = yield* rawRequest({ method: "GET", path: "/api/v1/scim/v2/Users/%2e%2e/x", headers: { "x-request-id": "scim-400" } })
        expect(target.status).toBe(400)
        expect(target.headers["content-type"]).toBe("application/scim+json")
        expect(JSON.parse(target.text)).toEqual({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "400", detail: expect.any(String) })
        expect(target.headers["x-request-id"]).toBe("scim-400")
        expect(target.headers["x-ratelimit-limit"]).toBe("25")

        const store = yield* ScimTokenRepositoryMemory
        const { token } = yield* issueScim()
        yield* store.setDown(true)
        const down = yield* send("/api/v1/scim/v2/Users", { token, ...from("198.51.100.3") }).pipe(Effect.ensuring(store.setDown(false)))
        expectScimError(scimOf(down), 503, "The token store is unavailable; retry shortly.")
        expect(down.headers.get("retry-after")).toBe("5")
        expectRateLimitHeaders(down, 25)
      }))

    it.effect("forwards an admitted call as the caller scim:<token id>, and passes provisioning's own SCIM answers through unchanged", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const made = yield* issueScim()
        const unknown = yield* send("/api/v1/scim/v2/Users/unknown-user", { token: made.token })
        expect({ status: unknown.status, type: unknown.headers.get("content-type"), text: unknown.text }).toEqual({
          status: 404,
          type: "application/scim+json",
          text: upstreamScimError
        })
        expectRateLimitHeaders(unknown, 4)
        const seen = provisioning.seen.find((request) => request.url === "/api/v1/scim/v2/Users/unknown-user")!
        expect(seen.headers.authorization).toBeUndefined()
        const sent = { audience: "provisioning", method: "GET", target: "/api/v1/scim/v2/Users/unknown-user" } as const
        expect(Result.map(verifyAssertion(TestSecret, seen.headers["x-portfolio-assertion"] as string, sent), (opened) => opened.identity)).toEqual(
          Result.succeed(new CallerIdentity({ tenantId: made.tenantId, subject: `scim:${made.id}`, role: "scim", scope: "write" }))
        )
      }))
  })
})
