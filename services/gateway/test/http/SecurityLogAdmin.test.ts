import { HttpClient, HttpClientRequest } from "effect/http"
import { describe, expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { signedRequest } from "@portfolio/platform/security"
import { Clock, DateTime, Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { AdminLive, OperatorSubject, operator } from "../support/AdminHttp.js"
import { PatRepositoryMemory } from "../support/PatRepositoryMemory.js"
import { MembershipDeskMemory } from "../support/MembershipDeskMemory.js"
import { SecurityLogMemory } from "@portfolio/platform/testing"
import { TestSecret } from "../support/testConfig.js"

/** The console signs as the member it acts for; it records what they do itself. */
const consoleCaller = new CallerIdentity({ tenantId: operator.tenantId, subject: "console:admin@acme.example", role: "operator", scope: "admin" })
const userAgent = "portfolio-cli/1.4.0"
// The socket peer of the test client, over loopback (IPv4, or IPv4-mapped on a dual-stack socket).
const loopback = /^(::ffff:)?127\.0\.0\.1$/

const call = (method: "GET" | "POST", path: string, options: { body?: unknown; as?: CallerIdentity; headers?: Record<string, string>; query?: Record<string, string> } = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = method === "GET" ? HttpClientRequest.get(path) : HttpClientRequest.post(path)
    if (options.body !== undefined) request = HttpClientRequest.bodyJsonUnsafe(request, options.body)
    if (options.query !== undefined) request = HttpClientRequest.setUrlParams(request, options.query)
    request = HttpClientRequest.setHeaders(request, { "user-agent": userAgent, ...options.headers })
    request = signedRequest(TestSecret, options.as ?? operator, { nowMs: yield* Clock.currentTimeMillis })(request)
    const response = yield* client.execute(request)
    return { status: response.status, body: (yield* response.json) as any }
  }).pipe(Effect.scoped)

const ok = (expected: number, reply: { readonly status: number; readonly body: any }) => {
  expect(reply.status, JSON.stringify(reply.body)).toBe(expected)
  return reply.body
}

/** The log's entries of one tenant, oldest first, as recorded (before any JSON). */
const entriesOf = (tenantId: string) =>
  Effect.map(Effect.flatMap(SecurityLogMemory, (m) => m.all), (all) => all.filter((e) => e.tenantId === tenantId).map((e) => ({ ...e })))

const holder = (tenantId: string) => ({ tenantId, userSub: "auth0|holder", email: "holder@example.com", role: "tenant-admin", scope: "write" })
const requestBody = (tenantId: string, overrides: Record<string, unknown> = {}) => ({
  tenantId,
  userSub: "auth0|dev",
  email: "dev@example.com",
  role: "architect",
  scope: "read",
  days: 30,
  justification: "Nightly export of the application list to the CMDB.",
  ...overrides
})

/** The requester, a member as provisioning holds them, which approvals read again. */
const joined = (body: ReturnType<typeof requestBody>) =>
  Effect.flatMap(MembershipDeskMemory, (m) => m.join({ tenantId: body.tenantId, userSub: "auth0|dev", email: "dev@example.com", role: "architect" }))

describe("gateway admin API: the security log of operators' actions", () => {
  layer(AdminLive)((it) => {
    it.effect("records every PAT and partner client action of an operator, exactly, and never a token or secret", () =>
      Effect.gen(function*() {
        const tenantId = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
        yield* joined(requestBody(tenantId))
        const at = yield* DateTime.now
        const pat = ok(201, yield* call("POST", "/admin/pats", { body: holder(tenantId) }))
        const filed = ok(201, yield* call("POST", "/admin/pat-requests", { body: requestBody(tenantId) }))
        const approved = ok(200, yield* call("POST", `/admin/pat-requests/${filed.id}/approve`, { body: {} }))
        const refusedOne = ok(201, yield* call("POST", "/admin/pat-requests", { body: requestBody(tenantId, { scope: "write", days: 7 }) }))
        ok(200, yield* call("POST", `/admin/pat-requests/${refusedOne.id}/deny`, { body: { reason: "Read is enough." } }))
        // By the token itself: the entry names the token's id, never the token.
        ok(200, yield* call("POST", "/admin/pats/revoke", { body: { tokenOrId: pat.token } }))
        const partner = ok(201, yield* call("POST", `/admin/tenants/${tenantId}/partner-clients`, { body: { name: "log-erp", scope: "read" } }))
        const rotated = ok(200, yield* call("POST", `/admin/partner-clients/${partner.clientId}/rotate-secret`, { body: { graceSeconds: 3600 } }))
        ok(200, yield* call("POST", `/admin/partner-clients/${partner.clientId}/disable`))
        ok(200, yield* call("POST", `/admin/partner-clients/${partner.clientId}/enable`))

        const entries = yield* entriesOf(tenantId)
        const by = { tenantId, at, actorSub: OperatorSubject, actorEmail: "", ip: expect.stringMatching(loopback), userAgent }
        const id = expect.stringMatching(/^[0-9a-f-]{36}$/)
        expect(entries).toEqual([
          {
            ...by,
            id,
            action: "pat_created",
            target: pat.id,
            detail: {
              userSub: "auth0|holder",
              email: "holder@example.com",
              scope: "write",
              tokenPrefix: pat.tokenPrefix,
              expiresAt: DateTime.formatIso(DateTime.add(at, { days: 90 }))
            }
          },
          { ...by, id, action: "pat_requested", target: filed.id, detail: { requester: "dev@example.com", scope: "read", days: 30 } },
          {
            ...by,
            id,
            action: "pat_request_approved",
            target: filed.id,
            detail: { requester: "dev@example.com", role: "architect", scope: "read", tokenPrefix: approved.pat.tokenPrefix }
          },
          { ...by, id, action: "pat_requested", target: refusedOne.id, detail: { requester: "dev@example.com", scope: "write", days: 7 } },
          { ...by, id, action: "pat_request_denied", target: refusedOne.id, detail: { requester: "dev@example.com", reason: "Read is enough." } },
          { ...by, id, action: "pat_revoked", target: pat.id, detail: { tokenPrefix: pat.tokenPrefix } },
          { ...by, id, action: "partner_client_created", target: partner.clientId, detail: { scope: "read" } },
          { ...by, id, action: "partner_secret_rotated", target: partner.clientId, detail: { graceSeconds: 3600 } },
          { ...by, id, action: "partner_client_disabled", target: partner.clientId, detail: {} },
          { ...by, id, action: "partner_client_enabled", target: partner.clientId, detail: {} }
        ])
        expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length)
        const text = JSON.stringify(entries)
        for (const secret of [pat.token, approved.pat.token, partner.clientSecret, rotated.clientSecret]) expect(text).not.toContain(secret)
      }))

    it.effect("keeps the socket's address whatever X-Forwarded-For says, even with TRUSTED_PROXY_HOPS set for the public port, and an empty User-Agent as empty", () =>
      Effect.gen(function*() {
        const tenantId = "6e5d4c3b-2a1f-4e0d-9c8b-7a6f5e4d3c2b"
        ok(201, yield* call("POST", "/admin/pats", { body: holder(tenantId), headers: { "x-forwarded-for": "203.0.113.9", "user-agent": "" } }))
        const [entry] = yield* entriesOf(tenantId)
        expect(entry).toMatchObject({ action: "pat_created", ip: expect.stringMatching(loopback), userAgent: "" })
      }))

    it.effect("records nothing for what the console does: it records its members' actions itself", () =>
      Effect.gen(function*() {
        const tenantId = "7f6e5d4c-3b2a-4f1e-8d0c-9b8a7f6e5d4c"
        yield* joined(requestBody(tenantId))
        const pat = ok(201, yield* call("POST", "/admin/pats", { body: holder(tenantId), as: consoleCaller }))
        const filed = ok(201, yield* call("POST", "/admin/pat-requests", { body: requestBody(tenantId), as: consoleCaller }))
        ok(200, yield* call("POST", `/admin/pat-requests/${filed.id}/approve`, { body: {}, as: consoleCaller }))
        ok(200, yield* call("POST", "/admin/pats/revoke", { body: { tokenOrId: pat.id }, as: consoleCaller }))
        const partner = ok(201, yield* call("POST", `/admin/tenants/${tenantId}/partner-clients`, { body: { name: "console-erp", scope: "read" }, as: consoleCaller }))
        ok(200, yield* call("POST", `/admin/partner-clients/${partner.clientId}/rotate-secret`, { body: { graceSeconds: 0 }, as: consoleCaller }))
        ok(200, yield* call("POST", `/admin/partner-clients/${partner.clientId}/disable`, { as: consoleCaller }))
        expect(yield* entriesOf(tenantId)).toEqual([])
        expect(ok(200, yield* call("GET", `/admin/tenants/${tenantId}/gateway-security-events`))).toEqual([])
      }))

    it.effect("records nothing for a refused action", () =>
      Effect.gen(function*() {
        const tenantId = "8a7f6e5d-4c3b-4a2f-9e1d-0c9b8a7f6e5d"
        const unknown = "0f1e2d3c-4b5a-4697-8877-665544332211"
        ok(400, yield* call("POST", "/admin/pats", { body: { ...holder(tenantId), days: 367 } }))
        ok(404, yield* call("POST", "/admin/pats/revoke", { body: { tokenOrId: unknown } }))
        ok(400, yield* call("POST", "/admin/pat-requests", { body: requestBody(tenantId, { role: "viewer", scope: "write" }) }))
        ok(404, yield* call("POST", `/admin/pat-requests/${unknown}/approve`, { body: {} }))
        ok(404, yield* call("POST", `/admin/pat-requests/${unknown}/deny`, { body: { reason: "No." } }))
        ok(201, yield* call("POST", `/admin/tenants/${tenantId}/partner-clients`, { body: { name: "refused-erp", scope: "read" } }))
        const before = yield* entriesOf(tenantId)
        expect(before.map((e) => e.action)).toEqual(["partner_client_created"])
        ok(409, yield* call("POST", `/admin/tenants/${tenantId}/partner-clients`, { body: { name: "refused-erp", scope: "write" } }))
        ok(404, yield* call("POST", "/admin/partner-clients/service-partner-nobody/rotate-secret", { body: { graceSeconds: 0 } }))
        ok(404, yield* call("POST", "/admin/partner-clients/service-partner-nobody/disable"))
        ok(404, yield* call("POST", "/admin/partner-clients/service-partner-nobody/enable"))
        expect(yield* entriesOf(tenantId)).toEqual(before)
      }))

    it.effect("an entry that cannot be recorded undoes the action: 503, and no token is kept", () =>
      Effect.gen(function*() {
        const tenantId = "9b8a7f6e-5d4c-4b3a-8f2e-1d0c9b8a7f6e"
        const log = yield* SecurityLogMemory
        const pats = yield* PatRepositoryMemory
        const before = (yield* pats.all).length
        yield* log.setDown(true)
        const reply = yield* call("POST", "/admin/pats", { body: holder(tenantId) }).pipe(Effect.ensuring(log.setDown(false)))
        ok(503, reply)
        expect((yield* pats.all).length).toBe(before)
        expect(yield* entriesOf(tenantId)).toEqual([])
      }))

    it.effect("GET /admin/tenants/:tenantId/gateway-security-events: the tenant's entries, newest first, since a time, at most limit", () =>
      Effect.gen(function*() {
        const acme = "0c9b8a7f-6e5d-4c4b-9a3f-2e1d0c9b8a7f"
        const other = "1d0c9b8a-7f6e-4d5c-8b4a-3f2e1d0c9b8a"
        const times: Array<DateTime.Utc> = []
        const ids: Array<string> = []
        for (const name of ["one", "two", "three"]) {
          yield* TestClock.adjust(Duration.minutes(1))
          times.push(yield* DateTime.now)
          ids.push(ok(201, yield* call("POST", `/admin/tenants/${acme}/partner-clients`, { body: { name: `list-${name}`, scope: "read" } })).clientId)
        }
        ok(201, yield* call("POST", `/admin/tenants/${other}/partner-clients`, { body: { name: "list-other", scope: "read" } }))
        const list = (query: Record<string, string> = {}) => call("GET", `/admin/tenants/${acme}/gateway-security-events`, { query })
        const all = ok(200, yield* list())
        expect(all.map((e: any) => e.target)).toEqual([ids[2], ids[1], ids[0]])
        expect(all[0]).toEqual({
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          tenantId: acme,
          at: DateTime.formatIso(times[2]!),
          actorSub: OperatorSubject,
          actorEmail: "",
          action: "partner_client_created",
          target: ids[2],
          ip: expect.stringMatching(loopback),
          userAgent,
          detail: { scope: "read" }
        })
        const since = ok(200, yield* list({ since: DateTime.formatIso(times[1]!) }))
        expect(since.map((e: any) => e.target)).toEqual([ids[2], ids[1]])
        const limited = ok(200, yield* list({ limit: "1" }))
        expect(limited.map((e: any) => e.target)).toEqual([ids[2]])
        for (const limit of ["0", "1001", "many"]) ok(400, yield* list({ limit }))
        ok(400, yield* list({ since: "yesterday" }))
      }))
  })
})
