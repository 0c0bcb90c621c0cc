import { HttpApiClient } from "effect/http-api"
import { HttpClient, HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { ActorRequest, CallerIdentity, InviteAsRequest, ProvisioningAdminApi } from "@portfolio/domain"
import { operatorClient, signedRequest } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"
import { AdminHttpLive, PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { provisionSsoMember } from "../../src/usecases/Tenants.js"
import { adminOf, lastMailTo, tenantWithAdmin } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret, testServer } from "../support/TestServer.js"

/** The console's operator assertion, as it signs for a member. */
const consoleOperator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "console:chief@example.test", role: "operator", scope: "admin" })

const HourlyLimit = 4

const TestServer = testServer(AdminHttpLive, PgAdaptersLayer({ invitationsPerTenantPerHour: HourlyLimit }))

interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly json: any
}

const execute = (request: HttpClientRequest.HttpClientRequest, caller: CallerIdentity) =>
  Effect.gen(function*() {
    const response = yield* (yield* HttpClient.HttpClient).execute(signedRequest(testSecret, caller)(request))
    const text = yield* response.text
    return { status: response.status, headers: response.headers, json: text === "" ? null : JSON.parse(text) } as Reply
  })

/** A call to the admin port, signed as the console. */
const admin = (method: "GET" | "POST", path: string, body?: unknown) =>
  execute(method === "GET" ? HttpClientRequest.get(path) : HttpClientRequest.post(path).pipe(HttpClientRequest.bodyJsonUnsafe(body)), consoleOperator)

/**
 * A call to the public port on the same database, as the gateway forwards it for `caller`: the
 * port is served for this call only, its ports taken from the admin test server's.
 */
const publicCall = (caller: CallerIdentity, method: "GET" | "POST" | "DELETE", path: string, body?: unknown) =>
  execute(
    method === "GET"
      ? HttpClientRequest.get(`/api/v1${path}`)
      : method === "DELETE"
      ? HttpClientRequest.delete(`/api/v1${path}`)
      : HttpClientRequest.post(`/api/v1${path}`).pipe(HttpClientRequest.bodyJsonUnsafe(body)),
    caller
  ).pipe(Effect.provide(testServer(PublicHttpLive, Layer.empty), { local: true }))

/** The five console operations for `actorSub`, each aimed at something that exists, so that only authorization can refuse. */
const consoleOperations = (tenantId: string, actorSub: string, invitationId: string, userSub: string) => ({
  listMembersAs: admin("GET", `/admin/console/tenants/${tenantId}/members?actorSub=${encodeURIComponent(actorSub)}`),
  listInvitationsAs: admin("GET", `/admin/console/tenants/${tenantId}/invitations?actorSub=${encodeURIComponent(actorSub)}`),
  inviteAs: admin("POST", `/admin/console/tenants/${tenantId}/invitations`, { actorSub, email: "refused@example.test", arbRole: "viewer" }),
  revokeInvitationAs: admin("POST", `/admin/console/tenants/${tenantId}/invitations/${invitationId}/revoke`, { actorSub }),
  removeMemberAs: admin("POST", `/admin/console/tenants/${tenantId}/members/${encodeURIComponent(userSub)}/remove`, { actorSub })
})

/** The same five on the public port, for `caller`. */
const publicOperations = (caller: CallerIdentity, invitationId: string, userSub: string) => ({
  listMembersAs: publicCall(caller, "GET", "/tenant/invitations/members"),
  listInvitationsAs: publicCall(caller, "GET", "/tenant/invitations"),
  inviteAs: publicCall(caller, "POST", "/tenant/invitations", { email: "refused@example.test", arbRole: "viewer" }),
  revokeInvitationAs: publicCall(caller, "DELETE", `/tenant/invitations/${invitationId}`),
  removeMemberAs: publicCall(caller, "DELETE", `/tenant/invitations/members/${encodeURIComponent(userSub)}`)
})

/** A problem without its `instance`, which names the path it was answered on. */
const problem = ({ json, status }: Reply) => {
  const { instance: _, ...rest } = json as Record<string, unknown>
  return { status, ...rest }
}

/**
 * A tenant whose first admin's e-mail is held in mixed case, with a viewer, an architect and a
 * second tenant-admin (single sign-on members: the records are what counts, not how they joined),
 * and an invitation made by the admin on the public port.
 */
const tenant = (slug: string) =>
  Effect.gen(function*() {
    const { admin: chief, caller, tenant } = yield* tenantWithAdmin(slug, `Chief@${slug}.test`)
    const sso = (userSub: string, arbRole: "viewer" | "architect" | "tenant-admin") =>
      Effect.map(provisionSsoMember({ slug, userSub, email: `${userSub.replace("|", ".")}@${slug}.test`, arbRole }), ({ member }) => member)
    const viewer = yield* sso("sso|viewer", "viewer")
    const architect = yield* sso("sso|architect", "architect")
    const deputy = yield* sso("sso|deputy", "tenant-admin")
    const invited = yield* publicCall(caller, "POST", "/tenant/invitations", { email: `pending@${slug}.test`, arbRole: "contributor" })
    expect(invited.status).toBe(201)
    return { chief, caller, tenant, viewer, architect, deputy, pending: invited.json as { id: string } }
  })

const membersPath = (tenantId: string, actorSub: string, query = "") => `/admin/console/tenants/${tenantId}/members?actorSub=${encodeURIComponent(actorSub)}${query}`
const invitationsPath = (tenantId: string, actorSub?: string) =>
  `/admin/console/tenants/${tenantId}/invitations${actorSub === undefined ? "" : `?actorSub=${encodeURIComponent(actorSub)}`}`

layer(TestServer, { timeout: 60_000, excludeTestServices: true })("provisioning admin port: the console acting for a member", (it) => {
  it.effect("a tenant-admin actor lists, invites, revokes and removes, with the public endpoints' answers and effects", () =>
    Effect.gen(function*() {
      const { architect, caller, chief, pending, tenant: { id }, viewer } = yield* tenant("con-admin")

      const members = yield* admin("GET", membersPath(id, chief.userSub))
      expect(members.status).toBe(200)
      expect(members.json).toEqual((yield* publicCall(caller, "GET", "/tenant/invitations/members")).json)
      expect(members.json.map((m: any) => m.userSub)).toEqual(["sso|deputy", "sso|architect", "sso|viewer", chief.userSub])
      // Pages as the public list does, the next page's link repeating the actor.
      const first = yield* admin("GET", membersPath(id, chief.userSub, "&limit=3"))
      expect(first.json).toEqual(members.json.slice(0, 3))
      const next = /^<(members\?[^>]+)>; rel="next"$/.exec(first.headers["link"] ?? "")?.[1]
      expect(next).toContain(`actorSub=${encodeURIComponent(chief.userSub)}`)
      expect((yield* admin("GET", `/admin/console/tenants/${id}/${next}`)).json).toEqual(members.json.slice(3))

      const invited = yield* admin("POST", invitationsPath(id), { actorSub: chief.userSub, email: "New@con-admin.test", arbRole: "architect" })
      expect(invited.status).toBe(201)
      // The inviter is the actor, by the e-mail provisioning holds (as given, in mixed case).
      expect(invited.json).toMatchObject({ email: "New@con-admin.test", arbRole: "architect", status: "PENDING", invitedByEmail: "Chief@con-admin.test" })
      const mail = yield* lastMailTo("new@con-admin.test")
      expect(mail).toContain("Chief@con-admin.test")
      expect(mail).toContain("con-admin")

      const invitations = yield* admin("GET", invitationsPath(id, chief.userSub))
      expect(invitations.status).toBe(200)
      expect(invitations.json).toEqual((yield* publicCall(caller, "GET", "/tenant/invitations")).json)
      expect(invitations.json.map((i: any) => [i.email, i.status])).toEqual([
        ["New@con-admin.test", "PENDING"],
        ["pending@con-admin.test", "PENDING"],
        ["Chief@con-admin.test", "PENDING"]
      ])

      const revoke = (invitationId: string) => admin("POST", `/admin/console/tenants/${id}/invitations/${invitationId}/revoke`, { actorSub: chief.userSub })
      expect(yield* revoke(pending.id)).toMatchObject({ status: 204, json: null })
      expect((yield* admin("GET", invitationsPath(id, chief.userSub))).json.find((i: any) => i.id === pending.id).status).toBe("REVOKED")
      expect(problem(yield* revoke(pending.id))).toEqual(problem(yield* publicCall(caller, "DELETE", `/tenant/invitations/${pending.id}`)))
      expect(problem(yield* revoke(pending.id))).toMatchObject({ status: 409, errorCode: "INVITATION_NOT_PENDING" })
      for (const unknown of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
        expect(problem(yield* revoke(unknown))).toEqual({
          status: 404,
          type: "https://errors.test/api/not-found",
          title: "Not found",
          detail: "No invitation with this id in the tenant.",
          errorCode: "NOT_FOUND"
        })
      }

      const remove = (userSub: string) =>
        admin("POST", `/admin/console/tenants/${id}/members/${encodeURIComponent(userSub)}/remove`, { actorSub: chief.userSub })
      expect(yield* remove(viewer.userSub)).toMatchObject({ status: 204, json: null })
      expect((yield* admin("GET", membersPath(id, chief.userSub))).json.map((m: any) => m.userSub)).not.toContain(viewer.userSub)
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT subject, payload->>'tenantId' AS tenant FROM provisioning.outbox WHERE payload->>'userSub' = ${viewer.userSub}`).toEqual([
        { subject: "events.provisioning.member.removed", tenant: id }
      ])
      // A second removal, and one of a member of no tenant of theirs, are the public 404.
      const again = yield* remove(viewer.userSub)
      expect(problem(again)).toMatchObject({ status: 404, errorCode: "NOT_FOUND", detail: "No member with this userSub in the tenant." })
      expect(problem(again)).toEqual(problem(yield* publicCall(caller, "DELETE", `/tenant/invitations/members/${encodeURIComponent(viewer.userSub)}`)))
      expect(yield* remove(architect.userSub)).toMatchObject({ status: 204 })
    }))

  it.effect("a viewer or an architect actor gets the public 403 on each operation, whatever the body claims, and nothing changes", () =>
    Effect.gen(function*() {
      const { architect, caller, chief, deputy, pending, tenant: { id }, viewer } = yield* tenant("con-viewer")
      const before = [(yield* admin("GET", membersPath(id, chief.userSub))).json, (yield* admin("GET", invitationsPath(id, chief.userSub))).json]
      for (const actor of [viewer, architect]) {
        // A gateway token of the member: its claims are the records' here, so that only the path differs.
        const publicAnswers = publicOperations(new CallerIdentity({ tenantId: id, subject: actor.userSub, role: actor.arbRole, scope: "write" }), pending.id, deputy.userSub)
        for (const [name, call] of Object.entries(consoleOperations(id, actor.userSub, pending.id, deputy.userSub))) {
          const refused = yield* call
          expect({ name, ...problem(refused) }).toMatchObject({ name, status: 403, errorCode: "INSUFFICIENT_SCOPE" })
          expect(refused.json.detail).toMatch(new RegExp(`^role '${actor.arbRole}' does not allow .+, which requires the tenant-admin role$`))
          expect({ name, ...problem(refused) }).toEqual({ name, ...problem(yield* publicAnswers[name as keyof typeof publicAnswers]) })
        }
      }
      // A role in the body is not read: the membership's is.
      const claimed = yield* admin("POST", invitationsPath(id), { actorSub: viewer.userSub, role: "tenant-admin", arbRole: "viewer", email: "x@con-viewer.test" })
      expect(problem(claimed)).toMatchObject({ status: 403, errorCode: "INSUFFICIENT_SCOPE" })
      const removal = yield* admin("POST", `/admin/console/tenants/${id}/members/${deputy.userSub}/remove`, { actorSub: viewer.userSub, arbRole: "tenant-admin" })
      expect(removal.status).toBe(403)
      expect([(yield* admin("GET", membersPath(id, chief.userSub))).json, (yield* admin("GET", invitationsPath(id, chief.userSub))).json]).toEqual(before)
      expect((yield* publicCall(caller, "GET", "/tenant/invitations")).json).toEqual(before[1])
    }))

  it.effect("an actorSub that is no active member of the tenant gets what the public path answers a removed member: 401, and nothing changes", () =>
    Effect.gen(function*() {
      const { caller, chief, deputy, pending, tenant: { id }, viewer } = yield* tenant("con-gone")
      const other = yield* tenantWithAdmin("con-gone-other")
      expect((yield* admin("POST", `/admin/console/tenants/${id}/members/${deputy.userSub}/remove`, { actorSub: chief.userSub })).status).toBe(204)
      const before = [(yield* admin("GET", membersPath(id, chief.userSub))).json, (yield* admin("GET", invitationsPath(id, chief.userSub))).json]
      // The removed tenant-admin's token, not yet revoked by the gateway, on the public path.
      const publicAnswers = publicOperations(adminOf(id, deputy.userSub), pending.id, viewer.userSub)
      const expected = { status: 401, type: "https://errors.test/api/unauthenticated", title: "Unauthenticated", detail: "The token has been revoked.", errorCode: "UNAUTHENTICATED" }
      for (const name of Object.keys(publicAnswers) as Array<keyof typeof publicAnswers>) {
        expect({ name, ...problem(yield* publicAnswers[name]) }).toEqual({ name, ...expected })
      }
      // Removed from this tenant, an admin of another tenant only, and a userSub nobody has.
      for (const actorSub of [deputy.userSub, other.admin.userSub, "never-a-member"]) {
        for (const [name, call] of Object.entries(consoleOperations(id, actorSub, pending.id, viewer.userSub))) {
          expect({ name, actorSub, ...problem(yield* call) }).toEqual({ name, actorSub, ...expected })
        }
      }
      // A tenant that does not exist reads the same; a tenant id that is not a UUID is a bad request.
      const nowhere = consoleOperations("00000000-0000-4000-8000-000000000000", chief.userSub, pending.id, viewer.userSub)
      for (const [name, call] of Object.entries(nowhere)) expect({ name, ...problem(yield* call) }).toEqual({ name, ...expected })
      const malformed = yield* admin("GET", membersPath("con-gone", chief.userSub))
      expect(problem(malformed)).toMatchObject({ status: 400, errorCode: "INVALID_REQUEST" })
      for (const body of [{}, { actorSub: "" }, { actorSub: "a\u0000b" }]) {
        const refused = yield* admin("POST", `/admin/console/tenants/${id}/invitations/${pending.id}/revoke`, body)
        expect({ body, ...problem(refused) }).toMatchObject({ body, status: 400, errorCode: "INVALID_REQUEST" })
      }
      expect((yield* admin("GET", `/admin/console/tenants/${id}/members`)).status).toBe(400)
      expect([(yield* admin("GET", membersPath(id, chief.userSub))).json, (yield* admin("GET", invitationsPath(id, chief.userSub))).json]).toEqual(before)
      expect((yield* publicCall(caller, "GET", "/tenant/invitations/members")).json).toEqual(before[0])
    }))

  it.effect("the tenant's last tenant-admin cannot be removed (409 LAST_TENANT_ADMIN); removing oneself while another admin remains is allowed", () =>
    Effect.gen(function*() {
      const { chief, deputy, tenant: { id } } = yield* tenant("con-last")
      const remove = (actorSub: string, userSub: string) => admin("POST", `/admin/console/tenants/${id}/members/${encodeURIComponent(userSub)}/remove`, { actorSub })
      // The deputy leaves: the chief remains.
      expect((yield* remove(deputy.userSub, deputy.userSub)).status).toBe(204)
      const last = yield* remove(chief.userSub, chief.userSub)
      expect(problem(last)).toEqual({
        status: 409,
        type: "https://errors.test/api/last-tenant-admin",
        title: "Conflict",
        detail: "This member is the tenant's last tenant-admin, and the tenant must keep one tenant-admin: invite another tenant-admin first.",
        errorCode: "LAST_TENANT_ADMIN"
      })
      expect(problem(last)).toEqual(problem(yield* publicCall(adminOf(id, chief.userSub), "DELETE", `/tenant/invitations/members/${chief.userSub}`)))
      const members = (yield* admin("GET", membersPath(id, chief.userSub))).json
      expect(members.filter((m: any) => m.arbRole === "tenant-admin").map((m: any) => m.userSub)).toEqual([chief.userSub])
      // The deputy is gone: their own console calls are refused as a removed member's.
      expect((yield* admin("GET", membersPath(id, deputy.userSub))).status).toBe(401)
    }))

  it.effect("invitations are judged as the public POST judges them: ALREADY_INVITED across both paths, bad e-mails and roles, existing members", () =>
    Effect.gen(function*() {
      const { caller, chief, tenant: { id }, viewer } = yield* tenant("con-dup")
      const inviteAs = (email: string, arbRole = "viewer") => admin("POST", invitationsPath(id), { actorSub: chief.userSub, email, arbRole })
      expect((yield* inviteAs("twice@con-dup.test")).status).toBe(201)
      const twice = yield* inviteAs("TWICE@con-dup.test", "architect")
      expect(problem(twice)).toEqual({
        status: 409,
        type: "https://errors.test/api/already-invited",
        title: "Conflict",
        detail: "A PENDING invitation already exists for this e-mail.",
        errorCode: "ALREADY_INVITED"
      })
      expect(problem(twice)).toEqual(problem(yield* publicCall(caller, "POST", "/tenant/invitations", { email: "twice@con-dup.test", arbRole: "viewer" })))
      // The invitation the admin made on the public port is as pending for the console.
      expect(problem(yield* inviteAs("pending@con-dup.test"))).toMatchObject({ status: 409, errorCode: "ALREADY_INVITED" })
      for (const [email, arbRole] of [["not an e-mail", "viewer"], ["ok@con-dup.test", "owner"], [viewer.userEmail, "viewer"]] as const) {
        const refused = yield* inviteAs(email, arbRole)
        expect({ email, ...problem(refused) }).toMatchObject({ email, status: 400, errorCode: "INVALID_INVITATION_PARAM" })
        expect(problem(refused)).toEqual(problem(yield* publicCall(caller, "POST", "/tenant/invitations", { email, arbRole })))
      }
      expect((yield* admin("GET", invitationsPath(id, chief.userSub))).json.map((i: any) => i.email).sort()).toEqual([
        "Chief@con-dup.test",
        "pending@con-dup.test",
        "twice@con-dup.test"
      ])
    }))

  it.effect("the hourly invitation limit counts the invitations of both paths; the console's 429 tells when to come back", () =>
    Effect.gen(function*() {
      // The fixture made one invitation on the public port; the welcome link is not counted.
      const { caller, chief, deputy, tenant: { id } } = yield* tenant("con-rate")
      const inviteAs = (actorSub: string, email: string) => admin("POST", invitationsPath(id), { actorSub, email, arbRole: "viewer" })
      expect((yield* inviteAs(chief.userSub, "one@con-rate.test")).status).toBe(201)
      expect((yield* publicCall(caller, "POST", "/tenant/invitations", { email: "two@con-rate.test", arbRole: "viewer" })).status).toBe(201)
      // Another admin of the same tenant: the count is the tenant's.
      expect((yield* inviteAs(deputy.userSub, "three@con-rate.test")).status).toBe(201)
      const limited = yield* inviteAs(chief.userSub, "four@con-rate.test")
      expect(problem(limited)).toMatchObject({ status: 429, errorCode: "RATE_LIMITED" })
      expect(limited.json.detail).toMatch(new RegExp(`^At most ${HourlyLimit} invitations per tenant per hour; the next one is possible at `))
      const retryAfter = Number(limited.headers["retry-after"])
      expect(retryAfter).toBeGreaterThan(3500)
      expect(retryAfter).toBeLessThanOrEqual(3600)
      expect(limited.headers).toMatchObject({ "x-ratelimit-limit": String(HourlyLimit), "x-ratelimit-remaining": "0" })
      expect(Number(limited.headers["x-ratelimit-reset"])).toBeGreaterThan(Date.now() / 1000)
      const publicLimited = yield* publicCall(caller, "POST", "/tenant/invitations", { email: "four@con-rate.test", arbRole: "viewer" })
      expect(publicLimited.status).toBe(429)
      expect(publicLimited.headers["x-ratelimit-reset"]).toBe(limited.headers["x-ratelimit-reset"])
      expect((yield* lastMailTo("three@con-rate.test"))).toContain("sso.deputy@con-rate.test")
      expect((yield* admin("GET", invitationsPath(id, chief.userSub))).json).toHaveLength(HourlyLimit + 1)
    }))

  it.effect("the typed client decodes the console operations' answers and their problems", () =>
    Effect.gen(function*() {
      const { chief, tenant: { id }, viewer } = yield* tenant("con-typed")
      const client = yield* HttpApiClient.make(ProvisioningAdminApi, {
        transformClient: operatorClient({ baseUrl: "", secret: testSecret, operator: consoleOperator.subject })
      })
      const api = client.provisioningAdmin
      const members = yield* api.listMembersAs({ params: { tenantId: id }, query: { actorSub: chief.userSub } })
      expect(members.map((m) => m.userSub)).toContain(viewer.userSub)
      const invitation = yield* api.inviteAs({ params: { tenantId: id }, payload: new InviteAsRequest({ actorSub: chief.userSub, email: "typed@con-typed.test", arbRole: "viewer" }) })
      expect(invitation.invitedByEmail).toBe("Chief@con-typed.test")
      const again = yield* Effect.flip(api.inviteAs({ params: { tenantId: id }, payload: new InviteAsRequest({ actorSub: chief.userSub, email: "typed@con-typed.test", arbRole: "viewer" }) }))
      expect(again).toMatchObject({ _tag: "AlreadyInvited", detail: "A PENDING invitation already exists for this e-mail." })
      expect((yield* api.listInvitationsAs({ params: { tenantId: id }, query: { actorSub: chief.userSub } })).map((i) => i.id)).toContain(invitation.id)
      yield* api.revokeInvitationAs({ params: { tenantId: id, id: invitation.id }, payload: new ActorRequest({ actorSub: chief.userSub }) })
      expect(yield* Effect.flip(api.revokeInvitationAs({ params: { tenantId: id, id: invitation.id }, payload: new ActorRequest({ actorSub: chief.userSub }) }))).toMatchObject({
        _tag: "InvitationNotPending"
      })
      expect(yield* Effect.flip(api.removeMemberAs({ params: { tenantId: id, userSub: viewer.userSub }, payload: new ActorRequest({ actorSub: viewer.userSub }) }))).toMatchObject({
        _tag: "InsufficientScope"
      })
      yield* api.removeMemberAs({ params: { tenantId: id, userSub: viewer.userSub }, payload: new ActorRequest({ actorSub: chief.userSub }) })
      expect(yield* Effect.flip(api.removeMemberAs({ params: { tenantId: id, userSub: viewer.userSub }, payload: new ActorRequest({ actorSub: chief.userSub }) }))).toMatchObject({
        _tag: "NotFound"
      })
      expect(yield* Effect.flip(api.listMembersAs({ params: { tenantId: id }, query: { actorSub: viewer.userSub } }))).toMatchObject({
        _tag: "Unauthenticated",
        detail: "The token has been revoked."
      })
    }))
})
