import { HttpClient, HttpClientRequest } from "effect/http"
import { expect, layer } from "@effect/vitest"
import { CallerIdentity, SecurityEvent } from "@portfolio/domain"
import { SecurityLog, signedRequest } from "@portfolio/platform/security"
import { DateTime, Effect } from "effect"
import { AdminHttpLive } from "../../src/adapters/http/Servers.js"
import { createInvitation } from "../../src/usecases/Invitations.js"
import { removeMember } from "../../src/usecases/Members.js"
import { invite } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret, testServer } from "../support/TestServer.js"

const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator", role: "operator", scope: "admin" })

const TestServer = testServer(AdminHttpLive, PgAdaptersLayer())

const call = (method: "GET" | "POST", path: string, body?: unknown, caller: CallerIdentity = operator) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const base = method === "GET" ? HttpClientRequest.get(path) : HttpClientRequest.post(path).pipe(HttpClientRequest.bodyJsonUnsafe(body))
    const response = yield* client.execute(signedRequest(testSecret, caller)(base))
    return { status: response.status, json: (yield* response.json) as Record<string, any> }
  })

layer(TestServer, { timeout: 60_000, excludeTestServices: true })("provisioning admin port", (it) => {
  it.effect("creates a tenant with its SIGNUP admin, finds it and its member, refuses a second slug", () =>
    Effect.gen(function*() {
      const created = yield* call("POST", "/admin/tenants", { slug: "adminco", adminEmail: "Chief@AdminCo.test" })
      expect(created.status).toBe(201)
      expect(created.json.tenant.slug).toBe("adminco")
      expect(created.json.admin).toMatchObject({ userEmail: "Chief@AdminCo.test", arbRole: "tenant-admin", source: "SIGNUP" })
      // A new account: a link to set a password was mailed, valid 7 days.
      expect(Object.keys(created.json.welcome).sort()).toEqual(["expiresAt", "invitationId"])
      expect(Date.parse(created.json.welcome.expiresAt) - Date.parse(created.json.tenant.createdAt)).toBe(7 * 24 * 3600 * 1000)
      const again = yield* call("POST", "/admin/tenants", { slug: "adminco", adminEmail: "other@adminco.test" })
      expect(again).toEqual({
        status: 409,
        json: {
          type: "https://errors.test/api/conflict",
          title: "Conflict",
          status: 409,
          detail: "A tenant with the slug 'adminco' already exists.",
          instance: "/admin/tenants",
          errorCode: "CONFLICT"
        }
      })
      expect((yield* call("GET", "/admin/tenants/adminco")).json).toEqual(created.json.tenant)
      expect((yield* call("GET", "/admin/tenants/nope")).status).toBe(404)
      const found = yield* call("GET", "/admin/tenants/adminco/members/chief@adminco.test")
      expect(found).toEqual({ status: 200, json: { tenant: created.json.tenant, member: created.json.admin } })
      expect((yield* call("GET", "/admin/tenants/adminco/members/someone@adminco.test")).status).toBe(404)
    }))

  it.effect("provisions an SSO_JIT member as an OIDC login would", () =>
    Effect.gen(function*() {
      yield* call("POST", "/admin/tenants", { slug: "ssoco", adminEmail: "chief@ssoco.test" })
      const first = yield* call("POST", "/admin/tenants/ssoco/sso-members", { userSub: "oidc|7", email: "sam@ssoco.test" })
      expect(first.status).toBe(200)
      expect(first.json.member).toMatchObject({ userSub: "oidc|7", userEmail: "sam@ssoco.test", arbRole: "viewer", source: "SSO_JIT" })
      const found = yield* call("GET", "/admin/tenants/ssoco/members/SAM@ssoco.test")
      expect(found.json.member).toEqual(first.json.member)
    }))

  it.effect("refuses an SSO login of a removed member with 409 MEMBER_REMOVED", () =>
    Effect.gen(function*() {
      const created = yield* call("POST", "/admin/tenants", { slug: "ssogone", adminEmail: "chief@ssogone.test" })
      const login = { userSub: "oidc|gone", email: "gone@ssogone.test", arbRole: "architect" }
      expect((yield* call("POST", "/admin/tenants/ssogone/sso-members", login)).status).toBe(200)
      const caller = new CallerIdentity({ tenantId: created.json.tenant.id, subject: created.json.admin.userSub, role: "tenant-admin", scope: "write" })
      yield* removeMember(caller, "oidc|gone")
      const again = yield* call("POST", "/admin/tenants/ssogone/sso-members", login)
      expect(again).toEqual({
        status: 409,
        json: {
          type: "https://errors.test/api/member-removed",
          title: "Conflict",
          status: 409,
          detail: "This person was removed from 'ssogone'; only a new invitation, once accepted, brings them back.",
          instance: "/admin/tenants/ssogone/sso-members",
          errorCode: "MEMBER_REMOVED"
        }
      })
      expect((yield* call("GET", "/admin/tenants/ssogone/members/gone@ssogone.test")).status).toBe(404)
    }))

  it.effect("lists a tenant's invitations and the locally kept mail with its magic link", () =>
    Effect.gen(function*() {
      const created = yield* call("POST", "/admin/tenants", { slug: "mailco", adminEmail: "chief@mailco.test" })
      const caller = new CallerIdentity({ tenantId: created.json.tenant.id, subject: created.json.admin.userSub, role: "tenant-admin", scope: "write" })
      const invitation = yield* createInvitation(caller, invite("Mia@Mailco.test", "viewer"))
      yield* createInvitation(caller, invite("other@mailco.test"))
      const listed = yield* call("GET", "/admin/tenants/mailco/invitations")
      expect(listed.status).toBe(200)
      // The admin's welcome link, made with the tenant, is listed too.
      expect(listed.json.map((i: { email: string; status: string }) => [i.email, i.status])).toEqual([
        ["other@mailco.test", "PENDING"],
        ["Mia@Mailco.test", "PENDING"],
        ["chief@mailco.test", "PENDING"]
      ])
      expect(listed.json[1].id).toBe(invitation.id)
      // The welcome link names the operator whose assertion created the tenant.
      expect(listed.json[2]).toMatchObject({ id: created.json.welcome.invitationId, arbRole: "tenant-admin", invitedByEmail: operator.subject })
      const welcome = yield* call("GET", "/admin/mail?to=chief@mailco.test")
      expect(welcome.json.map((m: { subject: string }) => m.subject)).toEqual(["Your workspace mailco is ready: set your password"])
      expect((yield* call("GET", "/admin/tenants/none/invitations")).status).toBe(404)
      const mail = yield* call("GET", "/admin/mail?to=mia@mailco.test")
      expect(mail.status).toBe(200)
      expect(mail.json).toHaveLength(1)
      expect(mail.json[0]).toMatchObject({ to: "Mia@Mailco.test", subject: "chief@mailco.test invited you to join mailco on Architecture Portfolio" })
      expect(mail.json[0].text).toMatch(/https:\/\/portfolio\.example\/accept\/[A-Za-z0-9_-]{43}/)
      const all = yield* call("GET", "/admin/mail")
      expect(all.json.map((m: { to: string }) => m.to).slice(0, 2)).toEqual(["other@mailco.test", "Mia@Mailco.test"])
    }))

  it.effect("lists a tenant's security log entries newest first, from `since`, at most `limit`; beside the slug routes", () =>
    Effect.gen(function*() {
      const created = yield* call("POST", "/admin/tenants", { slug: "logco", adminEmail: "chief@logco.test" })
      const tenantId: string = created.json.tenant.id
      const other = "11111111-1111-4111-8111-111111111111"
      const securityLog = yield* SecurityLog
      const entry = (id: string, tenant: string, at: string) =>
        securityLog.record(new SecurityEvent({
          id,
          tenantId: tenant,
          at: DateTime.makeUnsafe(at),
          actorSub: "sub-1",
          actorEmail: "jane@logco.test",
          action: "invitation_accepted",
          target: "22222222-2222-4222-8222-222222222222",
          ip: "198.51.100.1",
          userAgent: "Firefox/140",
          detail: { role: "viewer", kind: "invitation" }
        }))
      yield* entry("00000000-0000-4000-8000-000000000001", tenantId, "2020-03-01T10:00:00.000Z")
      yield* entry("00000000-0000-4000-8000-000000000002", tenantId, "2020-03-02T10:00:00.000Z")
      yield* entry("00000000-0000-4000-8000-000000000003", other, "2020-03-03T10:00:00.000Z")
      const path = `/admin/tenants/${tenantId}/security-events`
      const all = yield* call("GET", path)
      expect(all.status).toBe(200)
      // Newest: the welcome link the operator's creation of the tenant mailed, recorded as it happened.
      const welcome = expect.objectContaining({ tenantId, action: "member_invited", actorSub: operator.subject, target: created.json.welcome.invitationId })
      expect(all.json).toEqual([
        welcome,
        {
          id: "00000000-0000-4000-8000-000000000002",
          tenantId,
          at: "2020-03-02T10:00:00.000Z",
          actorSub: "sub-1",
          actorEmail: "jane@logco.test",
          action: "invitation_accepted",
          target: "22222222-2222-4222-8222-222222222222",
          ip: "198.51.100.1",
          userAgent: "Firefox/140",
          detail: { role: "viewer", kind: "invitation" }
        },
        expect.objectContaining({ id: "00000000-0000-4000-8000-000000000001", at: "2020-03-01T10:00:00.000Z" })
      ])
      const since = yield* call("GET", `${path}?since=2020-03-01T12:00:00.000Z`)
      expect(since.json.slice(1).map((e: { id: string }) => e.id)).toEqual(["00000000-0000-4000-8000-000000000002"])
      const limited = yield* call("GET", `${path}?limit=2`)
      expect(limited.json.slice(1).map((e: { id: string }) => e.id)).toEqual(["00000000-0000-4000-8000-000000000002"])
      expect((yield* call("GET", `${path}?limit=0`)).status).toBe(400)
      expect((yield* call("GET", `${path}?limit=1001`)).status).toBe(400)
      expect((yield* call("GET", "/admin/tenants/logco/security-events")).status).toBe(400)
      expect((yield* call("GET", `/admin/tenants/${other}/security-events`)).json).toHaveLength(1)
      // The slug routes at the same depth still answer as before.
      expect((yield* call("GET", "/admin/tenants/logco/invitations")).status).toBe(200)
      expect((yield* call("GET", "/admin/tenants/logco")).json.id).toBe(tenantId)
      const client = yield* HttpClient.HttpClient
      expect((yield* client.execute(HttpClientRequest.get(path))).status).toBe(401)
    }))

  it.effect("accepts only operator assertions", () =>
    Effect.gen(function*() {
      const tenantAdmin = new CallerIdentity({ tenantId: operator.tenantId, subject: "x", role: "tenant-admin", scope: "write" })
      const refused = yield* call("GET", "/admin/tenants/adminco", undefined, tenantAdmin)
      expect(refused.status).toBe(403)
      expect(refused.json.errorCode).toBe("INSUFFICIENT_SCOPE")
    }))
})
