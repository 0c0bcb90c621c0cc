import { HttpClient, HttpClientRequest, HttpServerRequest } from "effect/http"
import { expect, it as plainIt, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { signedRequest } from "@portfolio/platform/security"
import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Layer } from "effect"
import { publicOrigin } from "../../src/adapters/http/RequestOrigin.js"
import { AdminHttpLive, PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { createInvitation, revokeInvitation } from "../../src/usecases/Invitations.js"
import { provisionSsoMember } from "../../src/usecases/Tenants.js"
import { adminOf, apiOrigin, invite } from "../support/Fixtures.js"
import { testSettings } from "../support/Memory.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret, testServer } from "../support/TestServer.js"

const HourlyLimit = 3

// One trusted hop in front of the public port: the gateway, which forwards the client's address.
const TestServer = testServer(AdminHttpLive, PgAdaptersLayer({ trustedProxyHops: 1, invitationsPerTenantPerHour: HourlyLimit }))

const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator:alice", role: "operator", scope: "admin" })
const consoleOperator = new CallerIdentity({ tenantId: operator.tenantId, subject: "console:chief@example.test", role: "operator", scope: "admin" })

/** The test client's address as the admin port's socket sees it (an IPv4 or a dual-stack listener). */
const Loopback = /^(::ffff:)?127\.0\.0\.1$|^::1$/

/** What the gateway sends on: the client's address last in X-Forwarded-For, and the client's user agent. */
const gatewayHeaders = { "x-forwarded-for": "10.9.9.9, 198.51.100.23", "user-agent": "curl/8.7.1" }

interface Reply {
  readonly status: number
  readonly json: any
}

const execute = (request: HttpClientRequest.HttpClientRequest, caller: CallerIdentity, headers: Record<string, string>) =>
  Effect.gen(function*() {
    const response = yield* (yield* HttpClient.HttpClient).execute(signedRequest(testSecret, caller)(request.pipe(HttpClientRequest.setHeaders(headers))))
    const text = yield* response.text
    return { status: response.status, json: text === "" ? null : JSON.parse(text) } as Reply
  })

const build = (method: "GET" | "POST" | "DELETE", path: string, body?: unknown) =>
  method === "GET" ? HttpClientRequest.get(path) : method === "DELETE" ? HttpClientRequest.delete(path) : HttpClientRequest.post(path).pipe(HttpClientRequest.bodyJsonUnsafe(body))

/** A call to the admin port; an operator's X-Forwarded-For is a claim that no proxy vouches for. */
const admin = (method: "GET" | "POST", path: string, body?: unknown, caller = operator) =>
  execute(build(method, path, body), caller, { "x-forwarded-for": "203.0.113.66", "user-agent": "portfolio-cli/1.0" })

/** A call to the public port on the same database, as the gateway forwards it for `caller`. */
const publicCall = (caller: CallerIdentity, method: "POST" | "DELETE", path: string, body?: unknown) =>
  execute(build(method, `/api/v1${path}`, body), caller, gatewayHeaders).pipe(Effect.provide(testServer(PublicHttpLive, Layer.empty), { local: true }))

/** The tenant's log as the console reads it, oldest first, without the ids and times the test does not choose. */
const logOf = (tenantId: string) =>
  Effect.map(admin("GET", `/admin/tenants/${tenantId}/security-events`), ({ json }) =>
    (json as Array<Record<string, unknown>>).map(({ at, id, ...entry }) => {
      expect(typeof id).toBe("string")
      expect(Number.isNaN(Date.parse(at as string))).toBe(false)
      return entry
    }).reverse())

/** A tenant made by the operator on the admin port, with a viewer who joined by single sign-on. */
const tenant = (slug: string) =>
  Effect.gen(function*() {
    const created = yield* admin("POST", "/admin/tenants", { slug, adminEmail: `Chief@${slug}.test` })
    expect(created.status).toBe(201)
    const tenantId: string = created.json.tenant.id
    const chief = created.json.admin as { userSub: string; userEmail: string }
    const { member: viewer } = yield* provisionSsoMember({ slug, userSub: `sso|viewer-${slug}`, email: `Vic@${slug}.test`, arbRole: "viewer" })
    return { tenantId, chief, caller: adminOf(tenantId, chief.userSub), viewer, welcomeId: created.json.welcome.invitationId as string }
  })

layer(TestServer, { timeout: 60_000, excludeTestServices: true })("provisioning's security log, door by door", (it) => {
  it.effect("the operator's welcome and the API's invitation, revocation and removal are recorded: who, what, on what, from where", () =>
    Effect.gen(function*() {
      const { caller, chief, tenantId, viewer, welcomeId } = yield* tenant("doors")
      const invited = yield* publicCall(caller, "POST", "/tenant/invitations", { email: "Jane@Doors.test", arbRole: "architect" })
      expect(invited.status).toBe(201)
      expect((yield* publicCall(caller, "DELETE", `/tenant/invitations/${invited.json.id}`)).status).toBe(204)
      expect((yield* publicCall(caller, "DELETE", `/tenant/invitations/members/${encodeURIComponent(viewer.userSub)}`)).status).toBe(204)
      const resent = yield* admin("POST", "/admin/tenants/doors/welcome", { email: "chief@doors.test" })
      expect(resent.status).toBe(201)

      const byApi = { tenantId, actorSub: chief.userSub, actorEmail: "Chief@doors.test", ip: "198.51.100.23", userAgent: "curl/8.7.1" }
      // The admin port has no proxy in front: its socket's peer, whatever the header claims.
      const byOperator = { tenantId, actorSub: "operator:alice", actorEmail: "", ip: expect.stringMatching(Loopback), userAgent: "portfolio-cli/1.0" }
      expect(yield* logOf(tenantId)).toEqual([
        { ...byOperator, action: "member_invited", target: welcomeId, detail: { email: "Chief@doors.test", role: "tenant-admin", kind: "welcome" } },
        { ...byApi, action: "member_invited", target: invited.json.id, detail: { email: "Jane@Doors.test", role: "architect", kind: "invitation" } },
        { ...byApi, action: "invitation_revoked", target: invited.json.id, detail: { email: "Jane@Doors.test" } },
        { ...byApi, action: "member_removed", target: viewer.userSub, detail: { email: "Vic@doors.test" } },
        { ...byOperator, action: "member_invited", target: resent.json.invitationId, detail: { email: "chief@doors.test", role: "tenant-admin", kind: "welcome" } }
      ])
    }))

  it.effect("the console's door records nothing here: the console records those actions itself", () =>
    Effect.gen(function*() {
      const { chief, tenantId, viewer } = yield* tenant("console-door")
      const before = yield* logOf(tenantId)
      const inviteAs = yield* admin("POST", `/admin/console/tenants/${tenantId}/invitations`, { actorSub: chief.userSub, email: "jane@console-door.test", arbRole: "viewer" }, consoleOperator)
      expect(inviteAs.status).toBe(201)
      const revokeAs = yield* admin("POST", `/admin/console/tenants/${tenantId}/invitations/${inviteAs.json.id}/revoke`, { actorSub: chief.userSub }, consoleOperator)
      expect(revokeAs.status).toBe(204)
      const removeAs = yield* admin("POST", `/admin/console/tenants/${tenantId}/members/${encodeURIComponent(viewer.userSub)}/remove`, { actorSub: chief.userSub }, consoleOperator)
      expect(removeAs.status).toBe(204)
      expect(before.map((e) => e["action"])).toEqual(["member_invited"])
      expect(yield* logOf(tenantId)).toEqual(before)
    }))

  it.effect("a refused action records nothing: 400, 403, 404, 409 and 429 on the API, 404 and 409 from the operator", () =>
    Effect.gen(function*() {
      const { caller, chief, tenantId, viewer } = yield* tenant("refusals")
      const pending = yield* publicCall(caller, "POST", "/tenant/invitations", { email: "jane@refusals.test", arbRole: "viewer" })
      const revoked = yield* publicCall(caller, "POST", "/tenant/invitations", { email: "ann@refusals.test", arbRole: "viewer" })
      expect((yield* publicCall(caller, "DELETE", `/tenant/invitations/${revoked.json.id}`)).status).toBe(204)
      const before = yield* logOf(tenantId)
      expect(before.map((e) => e["action"])).toEqual(["member_invited", "member_invited", "member_invited", "invitation_revoked"])

      const refusals: ReadonlyArray<readonly [number, Effect.Effect<Reply, unknown, any>]> = [
        [400, publicCall(caller, "POST", "/tenant/invitations", { email: "not an e-mail", arbRole: "viewer" })],
        [400, publicCall(caller, "POST", "/tenant/invitations", { email: viewer.userEmail, arbRole: "viewer" })],
        [409, publicCall(caller, "POST", "/tenant/invitations", { email: "JANE@refusals.test", arbRole: "viewer" })],
        [403, publicCall(adminOf(tenantId, viewer.userSub, "write", "viewer"), "POST", "/tenant/invitations", { email: "max@refusals.test", arbRole: "viewer" })],
        [404, publicCall(caller, "DELETE", "/tenant/invitations/00000000-0000-4000-8000-000000000000")],
        [409, publicCall(caller, "DELETE", `/tenant/invitations/${revoked.json.id}`)],
        [409, publicCall(caller, "DELETE", `/tenant/invitations/members/${encodeURIComponent(chief.userSub)}`)],
        [404, publicCall(caller, "DELETE", "/tenant/invitations/members/nobody")],
        [404, admin("POST", "/admin/tenants/refusals/welcome", { email: "nobody@refusals.test" })],
        [409, admin("POST", "/admin/tenants/refusals/welcome", { email: viewer.userEmail })],
        [409, admin("POST", "/admin/tenants", { slug: "refusals", adminEmail: "other@refusals.test" })]
      ]
      for (const [status, call] of refusals) expect((yield* call).status).toBe(status)
      // The hour's third invitation fills the window: the fourth is refused.
      expect((yield* publicCall(caller, "POST", "/tenant/invitations", { email: "bo@refusals.test", arbRole: "viewer" })).status).toBe(201)
      expect((yield* publicCall(caller, "POST", "/tenant/invitations", { email: "cy@refusals.test", arbRole: "viewer" })).status).toBe(429)
      const after = yield* logOf(tenantId)
      expect(after.slice(0, before.length)).toEqual(before)
      expect(after.slice(before.length).map((e) => [e["action"], e["detail"]])).toEqual([
        ["member_invited", { email: "bo@refusals.test", role: "viewer", kind: "invitation" }]
      ])
      expect(pending.status).toBe(201)
    }))

  it.effect("concurrent revocations of one invitation: one succeeds and is recorded once, the others are 409 and record nothing", () =>
    Effect.gen(function*() {
      const { caller, tenantId } = yield* tenant("race")
      const invitation = yield* createInvitation(caller, invite("jane@race.test"))
      const results = yield* Effect.all(
        Array.from({ length: 5 }, () => publicCall(caller, "DELETE", `/tenant/invitations/${invitation.id}`)),
        { concurrency: "unbounded" }
      )
      expect(results.map((r) => r.status).sort()).toEqual([204, 409, 409, 409, 409])
      expect((yield* logOf(tenantId)).filter((e) => e["action"] === "invitation_revoked")).toHaveLength(1)
    }))

  it.effect("a unit of work that rolls back keeps neither the revocation nor its entry", () =>
    Effect.gen(function*() {
      const { caller, tenantId } = yield* tenant("rollback")
      const invitation = yield* createInvitation(caller, invite("jane@rollback.test"))
      const unitOfWork = yield* UnitOfWork
      const failed = yield* Effect.flip(unitOfWork.run(Effect.andThen(revokeInvitation(caller, invitation.id, apiOrigin), Effect.fail("later step failed"))))
      expect(failed).toBe("later step failed")
      expect((yield* logOf(tenantId)).map((e) => e["action"])).toEqual(["member_invited"])
      const listed = yield* admin("GET", "/admin/tenants/rollback/invitations")
      expect(listed.json.find((i: { id: string }) => i.id === invitation.id).status).toBe("PENDING")
    }))
})

plainIt.effect("the public port's origin: one trusted hop takes the last X-Forwarded-For entry; no User-Agent is recorded as \"\"", () =>
  Effect.gen(function*() {
    const origin = (headers: Record<string, string>) =>
      publicOrigin.pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(new Request("http://provisioning.test/", { headers }))))
    expect(yield* origin({ "x-forwarded-for": "10.9.9.9, 198.51.100.23" })).toEqual({ ip: "198.51.100.23", userAgent: "" })
    expect(yield* origin({ "user-agent": `Agent/${"x".repeat(400)}` })).toEqual({ ip: "unknown", userAgent: `Agent/${"x".repeat(294)}` })
  }).pipe(Effect.provide(testSettings({ trustedProxyHops: 1 }))))
