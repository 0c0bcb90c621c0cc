import { describe, expect, layer } from "@effect/vitest"
import { HttpApiClient } from "effect/http-api"
import { Conflict, GatewayAdminApi, NewPatRequest, PublicApi } from "@portfolio/domain"
import { operatorClient } from "@portfolio/platform/security"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { allowListOf } from "../../src/domain/AllowList.js"
import { admitRequest } from "../../src/usecases/AdmitRequest.js"
import { AdminLive, get, member, OperatorSubject, post } from "../support/AdminHttp.js"
import { MembershipDeskMemory } from "../support/MembershipDeskMemory.js"
import { problem } from "../support/ProxyHarness.js"
import { TestSecret } from "../support/testConfig.js"

const tenantId = "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b"
const justification = "Nightly export of the application list to the CMDB."

let n = 0
/** A request body of a member of its own userSub, so that each case sees only its own. */
const requestBody = (overrides: Record<string, unknown> = {}) => ({
  tenantId,
  userSub: `auth0|dev-${++n}`,
  email: "dev@example.com",
  role: "architect",
  scope: "write",
  justification,
  ...overrides
})

/** Filed for a member as provisioning holds them, as the console and the CLI file: approvals read them there again. */
const fileOk = (overrides: Record<string, unknown> = {}) => {
  const body = requestBody(overrides)
  return Effect.flatMap(MembershipDeskMemory, (memberships) => memberships.join(body as Parameters<typeof memberships.join>[0])).pipe(
    Effect.andThen(post("/admin/pat-requests", body)),
    Effect.map((reply) => {
      expect(reply.status).toBe(201)
      return reply.body
    })
  )
}

const admin = { tenantId, userSub: "auth0|admin", email: "admin@example.com", role: "tenant-admin" }


const readRoute = allowListOf(PublicApi).match("GET", "/api/v1/referentiel/functions")
const admitted = (token: string) =>
  Effect.map(
    admitRequest({ method: "GET", path: "/api/v1/referentiel/functions", route: readRoute, authorization: `Bearer ${token}`, clientIp: "192.0.2.7" }),
    (verdict) => Result.isSuccess(verdict.outcome)
  )

describe("gateway admin API: PAT requests", () => {
  layer(AdminLive)((it) => {
    it.effect("POST /admin/pat-requests files a pending request, the justification trimmed, 90 days by default", () =>
      Effect.gen(function*() {
        const body = requestBody({ justification: `  ${justification}  ` })
        const reply = yield* post("/admin/pat-requests", body)
        expect(reply.status).toBe(201)
        expect(reply.body).toEqual({
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          tenantId,
          userSub: body.userSub,
          email: "dev@example.com",
          role: "architect",
          scope: "write",
          days: 90,
          justification,
          status: "pending",
          createdAt: expect.any(String),
          expiresAt: expect.any(String),
          decidedAt: null,
          decidedBy: null,
          reason: null,
          patId: null
        })
        // Decidable for 30 days from its filing (docs/product-rules.md#pat-requests).
        expect(Date.parse(reply.body.expiresAt) - Date.parse(reply.body.createdAt)).toBe(30 * 86_400_000)
      }))

    it.effect("POST /admin/pat-requests refuses bad input with 400 and keeps nothing", () =>
      Effect.gen(function*() {
        const viewer = yield* post("/admin/pat-requests", requestBody({ role: "viewer", userSub: "auth0|viewer" }))
        expect(viewer).toEqual({
          status: 400,
          body: problem("INVALID_REQUEST", "invalid-request", "Invalid request", 400, "a member with the role 'viewer' may request a token of scope 'read' at most, not 'write'", "/admin/pat-requests")
        })
        const short = yield* post("/admin/pat-requests", requestBody({ justification: "   because    ", userSub: "auth0|viewer" }))
        expect(short.status).toBe(400)
        expect(short.body.errorCode).toBe("INVALID_REQUEST")
        expect(short.body.detail).toContain("the justification must be 20 to 2000 characters long once trimmed (got 7)")
        for (const bad of [{ days: 367 }, { days: 0 }, { scope: "admin" }, { role: "operator" }, { justification: undefined }, { email: "not an e-mail" }]) {
          const reply = yield* post("/admin/pat-requests", requestBody({ ...bad, userSub: "auth0|viewer" }))
          expect(reply.status).toBe(400)
          expect(reply.body.errorCode).toBe("INVALID_REQUEST")
        }
        const listed = yield* get("/admin/pat-requests", { tenantId, userSub: "auth0|viewer" })
        expect(listed).toEqual({ status: 200, body: [] })
      }))

    it.effect("POST /admin/pat-requests refuses a member's sixth pending request with 409 CONFLICT and keeps nothing", () =>
      Effect.gen(function*() {
        const userSub = "auth0|flooder"
        for (let i = 0; i < 5; i++) yield* fileOk({ userSub })
        const refused = yield* post("/admin/pat-requests", requestBody({ userSub }))
        expect(refused).toEqual({
          status: 409,
          body: problem(
            "CONFLICT",
            "conflict",
            "Conflict",
            409,
            "you have 5 pending PAT requests in this tenant, the most a member may have (5): wait for a tenant-admin to decide one (or ask them to deny one you no longer need), or for one to expire 30 days after its filing. Nothing was filed.",
            "/admin/pat-requests"
          )
        })
        // Declared on the endpoint: the typed clients (the console's, the CLI's) read it as the Conflict it is, not as an outage.
        const typed = yield* HttpApiClient.make(GatewayAdminApi, { transformClient: operatorClient({ baseUrl: "", secret: TestSecret, operator: "console:dev@example.com" }) })
        const decoded = yield* Effect.flip(typed.gatewayAdmin.filePatRequest({
          payload: new NewPatRequest({ tenantId, userSub, email: "dev@example.com", role: "architect", scope: "write", justification })
        }))
        expect(decoded).toBeInstanceOf(Conflict)
        const pending = yield* get("/admin/pat-requests", { tenantId, userSub, status: "pending" })
        expect(pending.body).toHaveLength(5)
        yield* post(`/admin/pat-requests/${pending.body[0].id}/deny`, { reason: "Not needed." })
        expect((yield* post("/admin/pat-requests", requestBody({ userSub }))).status).toBe(201)
      }))

    it.effect("accepts only operator assertions", () =>
      Effect.gen(function*() {
        expect((yield* post("/admin/pat-requests", requestBody(), null)).status).toBe(401)
        expect((yield* post("/admin/pat-requests", requestBody(), member)).status).toBe(403)
        expect((yield* get("/admin/pat-requests", { tenantId }, member)).status).toBe(403)
        expect((yield* get("/admin/pats", { tenantId, userSub: "x" }, null)).status).toBe(401)
      }))

    it.effect("GET /admin/pat-requests lists a tenant's requests newest first, by state and member; tenantId is required", () =>
      Effect.gen(function*() {
        const otherTenant = "5d5d5d5d-5d5d-4d5d-8d5d-5d5d5d5d5d5d"
        const first = yield* fileOk({ tenantId: otherTenant, userSub: "auth0|lister" })
        // The layer's clock is the test clock: without a step, the two would be filed at the same
        // instant and ordered by their random ids.
        yield* TestClock.adjust("1 second")
        const second = yield* fileOk({ tenantId: otherTenant })
        yield* post(`/admin/pat-requests/${first.id}/deny`, { reason: "Not needed." })
        const ids = (query: Record<string, string>) => Effect.map(get("/admin/pat-requests", query), (reply) => reply.body.map((r: any) => r.id))
        expect(yield* ids({ tenantId: otherTenant })).toEqual([second.id, first.id])
        expect(yield* ids({ tenantId: otherTenant, status: "pending" })).toEqual([second.id])
        expect(yield* ids({ tenantId: otherTenant, status: "denied", userSub: "auth0|lister" })).toEqual([first.id])
        expect((yield* get("/admin/pat-requests", {})).status).toBe(400)
        expect((yield* get("/admin/pat-requests", { tenantId, status: "expired" })).status).toBe(200)
        expect((yield* get("/admin/pat-requests", { tenantId, status: "lapsed" })).status).toBe(400)
      }))

    it.effect("GET /admin/pat-requests pages with limit and cursor (Link rel=next), the cursor bound to its tenant and filters", () =>
      Effect.gen(function*() {
        const pagedTenant = "6e6e6e6e-6e6e-4e6e-8e6e-6e6e6e6e6e6e"
        const filed: Array<string> = []
        for (let i = 0; i < 5; i++) {
          filed.push((yield* fileOk({ tenantId: pagedTenant })).id)
          // Two at the same instant: the id orders them, and a page boundary between them loses neither.
          if (i !== 1) yield* TestClock.adjust("1 second")
        }
        const whole = yield* get("/admin/pat-requests", { tenantId: pagedTenant })
        expect(whole.link).toBeUndefined()
        const order: Array<string> = whole.body.map((r: any) => r.id)
        expect([...order].sort()).toEqual([...filed].sort())
        const seen: Array<string> = []
        let query: Record<string, string> = { tenantId: pagedTenant, limit: "2" }
        for (let pages = 0; pages < 5; pages++) {
          const page = yield* get("/admin/pat-requests", query)
          expect(page.status).toBe(200)
          seen.push(...page.body.map((r: any) => r.id))
          if (page.link === undefined) break
          const cursor = /[?&]cursor=([^&>]+)/.exec(page.link)![1]!
          expect(page.link).toMatch(/^<pat-requests\?.*cursor=.*>; rel="next"$/)
          query = { tenantId: pagedTenant, limit: "2", cursor: decodeURIComponent(cursor) }
        }
        expect(seen).toEqual(order)
        const first = yield* get("/admin/pat-requests", { tenantId: pagedTenant, limit: "2" })
        const cursor = decodeURIComponent(/[?&]cursor=([^&>]+)/.exec(first.link!)![1]!)
        const elsewhere = yield* get("/admin/pat-requests", { tenantId, limit: "2", cursor })
        expect(elsewhere.status).toBe(400)
        expect((yield* get("/admin/pat-requests", { tenantId: pagedTenant, status: "pending", cursor })).status).toBe(400)
      }))

    it.effect("approval by the operator answers the token once and records the operator; the token works; a second approval is 409", () =>
      Effect.gen(function*() {
        const filed = yield* fileOk({ scope: "read", days: 7 })
        const path = `/admin/pat-requests/${filed.id}/approve`
        const approved = yield* post(path, {})
        expect(approved.status).toBe(200)
        expect(approved.body.request).toMatchObject({
          id: filed.id,
          status: "approved",
          decidedBy: { userSub: OperatorSubject, email: null, role: "operator" },
          patId: approved.body.pat.id,
          reason: null
        })
        expect(approved.body.pat).toMatchObject({ scope: "read", token: expect.stringMatching(/^ap_pat_[0-9A-Za-z]{36}$/) })
        expect(Date.parse(approved.body.pat.expiresAt) - Date.parse(approved.body.request.decidedAt)).toBe(7 * 86_400_000)
        expect(yield* admitted(approved.body.pat.token)).toBe(true)
        const again = yield* post(path, {})
        expect(again).toEqual({
          status: 409,
          body: problem("CONFLICT", "conflict", "Conflict", 409, `PAT request ${filed.id} is approved: only a pending request can be approved or denied.`, path)
        })
        const [listed] = (yield* get("/admin/pat-requests", { tenantId, userSub: filed.userSub })).body
        expect(listed).toEqual(approved.body.request)
        expect(JSON.stringify(listed)).not.toContain(approved.body.pat.token)
      }))

    it.effect("approval for a tenant-admin: never their own request (403), nor by another role (403), nor across tenants (404)", () =>
      Effect.gen(function*() {
        const own = yield* fileOk({ userSub: admin.userSub, role: "tenant-admin" })
        const ownReply = yield* post(`/admin/pat-requests/${own.id}/approve`, { approver: admin })
        expect(ownReply.status).toBe(403)
        expect(ownReply.body).toMatchObject({ errorCode: "INSUFFICIENT_SCOPE", detail: "a tenant-admin may not decide their own PAT request: another tenant-admin or an operator decides it" })
        const other = yield* fileOk()
        const byArchitect = yield* post(`/admin/pat-requests/${other.id}/approve`, { approver: { ...admin, role: "architect" } })
        expect(byArchitect.status).toBe(403)
        const elsewhere = yield* post(`/admin/pat-requests/${other.id}/approve`, { approver: { ...admin, tenantId: "00000000-1111-4222-8333-444444444444" } })
        expect(elsewhere.status).toBe(404)
        expect(elsewhere.body.errorCode).toBe("NOT_FOUND")
        const byAdmin = yield* post(`/admin/pat-requests/${other.id}/approve`, { approver: admin })
        expect(byAdmin.status).toBe(200)
        expect(byAdmin.body.request.decidedBy).toEqual({ userSub: admin.userSub, email: admin.email, role: "tenant-admin" })
      }))

    it.effect("an unknown request is 404, an id that is not a UUID 400", () =>
      Effect.gen(function*() {
        const unknown = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"
        const reply = yield* post(`/admin/pat-requests/${unknown}/approve`, {})
        expect(reply.body).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, `No PAT request has the id ${unknown}.`, `/admin/pat-requests/${unknown}/approve`))
        expect((yield* post(`/admin/pat-requests/${unknown}/deny`, { reason: "no" })).status).toBe(404)
        expect((yield* post("/admin/pat-requests/not-a-uuid/approve", {})).status).toBe(400)
      }))

    it.effect("denial takes a reason (400 without), records it, and settles the request (409 afterwards)", () =>
      Effect.gen(function*() {
        const filed = yield* fileOk()
        const path = `/admin/pat-requests/${filed.id}/deny`
        expect((yield* post(path, {})).status).toBe(400)
        expect((yield* post(path, { reason: "   " })).status).toBe(400)
        expect((yield* post(path, { reason: "x".repeat(501) })).status).toBe(400)
        const denied = yield* post(path, { reason: " Use the team's read token. ", approver: admin })
        expect(denied.status).toBe(200)
        expect(denied.body).toMatchObject({ status: "denied", reason: "Use the team's read token.", patId: null, decidedBy: { userSub: admin.userSub, role: "tenant-admin" } })
        expect((yield* post(path, { reason: "again" })).status).toBe(409)
        expect((yield* post(`/admin/pat-requests/${filed.id}/approve`, {})).status).toBe(409)
      }))

    it.effect("GET /admin/pats lists a member's tokens in force without the token; a member revokes only their own", () =>
      Effect.gen(function*() {
        const holder = { tenantId, userSub: "auth0|holder" }
        const mint = (userSub: string) =>
          Effect.flatMap(fileOk({ userSub }), (filed) => Effect.map(post(`/admin/pat-requests/${filed.id}/approve`, {}), (reply) => reply.body.pat))
        const first = yield* mint(holder.userSub)
        const second = yield* mint(holder.userSub)
        const someoneElse = yield* mint("auth0|someone-else")
        const listed = yield* get("/admin/pats", holder)
        expect(listed.status).toBe(200)
        expect(listed.body.map((p: any) => p.id).sort()).toEqual([first.id, second.id].sort())
        expect(Object.keys(listed.body[0]).sort()).toEqual(["createdAt", "expiresAt", "id", "lastUsedAt", "scope", "tokenPrefix"])
        expect(JSON.stringify(listed.body)).not.toContain(first.token)
        const refused = yield* post("/admin/pats/revoke", { tokenOrId: someoneElse.id, holder })
        expect(refused.status).toBe(404)
        expect(yield* admitted(someoneElse.token)).toBe(true)
        expect((yield* post("/admin/pats/revoke", { tokenOrId: first.token, holder })).status).toBe(200)
        expect((yield* get("/admin/pats", holder)).body.map((p: any) => p.id)).toEqual([second.id])
        expect((yield* get("/admin/pats", { tenantId })).status).toBe(400)
      }))
  })
})
