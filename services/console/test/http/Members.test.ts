import { expect, layer } from "@effect/vitest"
import { DateTime, Effect, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { MemoryWorld } from "../support/Memory.js"
import { Acme, alice, bob, everyone, gina, Globex, max } from "../support/People.js"
import { consoleServer, csrfOf, signedIn } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console members pages", (it) => {
  it.effect("an admin invites, sees and revokes the invitation, and removes a member, who loses the console at once; each recorded", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const page = yield* admin.get("/console/admin/members")
      expect(page.status).toBe(200)
      expect(page.html).toContain("bob@acme.test")
      expect(page.html).not.toContain("gina@globex.test")
      const csrf = csrfOf(page)
      const invited = yield* admin.post("/console/admin/members/invite", { csrf, email: "new@acme.test", arbRole: "architect" })
      expect(invited.location).toBe("/console/admin/members?notice=invited")
      const invitation = (yield* world).invitations.at(-1)!
      expect(invitation).toMatchObject({ email: "new@acme.test", arbRole: "architect", invitedByEmail: "alice@acme.test", tenantId: Acme.tenantId })
      const twice = yield* admin.post("/console/admin/members/invite", { csrf, email: "NEW@acme.test", arbRole: "viewer" })
      expect(twice.status).toBe(409)
      expect(twice.html).toContain("already has a pending invitation")
      expect(twice.html).toContain('value="NEW@acme.test"')
      expect((yield* admin.post(`/console/admin/invitations/${invitation.id}/revoke`, { csrf })).location).toContain("notice=revoked")
      expect((yield* world).invitations.at(-1)!.status).toBe("REVOKED")

      const member = yield* signedIn("bob@acme.test", bob.password)
      expect((yield* member.get("/console/tokens")).status).toBe(200)
      expect((yield* admin.post(`/console/admin/members/${encodeURIComponent("sub-bob")}/remove`, { csrf })).location).toContain("notice=removed")
      expect((yield* member.get("/console/tokens")).location).toBe("/console/sign-in")
      const log = (yield* world).events.filter((e) => e.tenantId === Acme.tenantId && ["member_invited", "invitation_revoked", "member_removed"].includes(e.action))
      expect(log.map((e) => [e.action, e.actorEmail])).toEqual([
        ["member_invited", "alice@acme.test"],
        ["invitation_revoked", "alice@acme.test"],
        ["member_removed", "alice@acme.test"]
      ])
    }))

  it.effect("keeps the last tenant-admin, and another tenant's member or invitation out of reach", () =>
    Effect.gen(function*() {
      // Max is an admin of globex and a contributor of acme: his acme pages refuse him.
      const both = yield* signedIn("max@both.test", max.password)
      const chooser = yield* both.get("/console/workspace")
      yield* both.post("/console/workspace", { csrf: csrfOf(chooser), tenantId: Acme.tenantId })
      expect((yield* both.get("/console/admin/members")).status).toBe(403)
      expect((yield* world).memberCalls.filter((c) => c.actor.email === "max@both.test")).toEqual([])
      const foreign = yield* signedIn("gina@globex.test", gina.password)
      const page = yield* foreign.get("/console/admin/members")
      const csrf = csrfOf(page)
      // Max is globex's other admin: removing him leaves Gina the last one.
      expect((yield* foreign.post(`/console/admin/members/sub-max/remove`, { csrf })).location).toContain("notice=removed")
      const last = yield* foreign.post(`/console/admin/members/sub-gina/remove`, { csrf })
      expect(last.status).toBe(409)
      expect(last.html).toContain("The last tenant-admin cannot be removed.")
      const acmeMember = yield* foreign.post(`/console/admin/members/sub-alice/remove`, { csrf })
      expect(acmeMember.status).toBe(404)
      expect((yield* world).people.find((p) => p.account.subject === "sub-alice")!.account.memberships).toHaveLength(1)
    }))

  it.effect("answers 404 to a removal whose userSub no member can have, with a valid CSRF token, removing nobody (issue 25)", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const csrf = csrfOf(yield* admin.get("/console/admin/members"))
      const isMember = Effect.map(world, (w) => w.people.find((p) => p.account.subject === "sub-vera")!.account.memberships.some((m) => m.tenantId === Acme.tenantId))
      const removals = Effect.map(world, (w) => w.memberCalls.filter((c) => c.op === "remove").length)
      // What a path segment can carry but no userSub holds (a tab, NUL, '/', a backslash, a dot segment once a
      // URL parser strips the tab): the console's 404 page, and provisioning is not even asked.
      for (const segment of [".%09.", "%09", "a%00b", "sub-vera%09", "sub-vera%2Fx", "sub-vera%5Cx"]) {
        const before = yield* removals
        const answer = yield* admin.post(`/console/admin/members/${segment}/remove`, { csrf })
        expect(answer.status, segment).toBe(404)
        expect(answer.html, segment).toContain("Page not found")
        expect(yield* removals, segment).toBe(before)
      }
      // A '?' or '#' is part of a userSub like any character: sent as the id, which is nobody's.
      for (const segment of ["sub-vera%3Fx=1", "sub-vera%23x"]) {
        const answer = yield* admin.post(`/console/admin/members/${segment}/remove`, { csrf })
        expect(answer.status, segment).toBe(404)
      }
      expect(yield* isMember).toBe(true)
    }))

  it.effect("shows in the security log what provisioning recorded itself (acceptances), merged by time, the tenant's only", () =>
    Effect.gen(function*() {
      const accepted = (tenantId: string, email: string, atMs: number) => ({
        id: randomUUID(),
        tenantId,
        at: DateTime.makeUnsafe(atMs),
        actorSub: `sub-${email}`,
        actorEmail: email,
        action: "invitation_accepted",
        target: randomUUID(),
        ip: "198.51.100.23",
        userAgent: "Firefox",
        detail: { role: "viewer", kind: "invitation" }
      })
      yield* Effect.flatMap(MemoryWorld, (ref) =>
        Ref.update(ref, (w) => ({ ...w, provisioningEvents: [accepted(Acme.tenantId, "joined@acme.test", Date.now() + 60_000), accepted(Globex.tenantId, "joined@globex.test", Date.now())] })))
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const log = yield* admin.get("/console/admin/security")
      expect(log.html).toContain("joined@acme.test")
      expect(log.html).not.toContain("joined@globex.test")
      // The newest first: the acceptance (a minute ahead) before the sign-in just made.
      expect(log.html.indexOf("invitation_accepted")).toBeLessThan(log.html.indexOf("sign_in"))
    }))

  it.effect("shows in the security log what the gateway recorded of operators' actions, merged by time, the tenant's only", () =>
    Effect.gen(function*() {
      const byOperator = (tenantId: string, action: string, target: string, atMs: number) => ({
        id: randomUUID(),
        tenantId,
        at: DateTime.makeUnsafe(atMs),
        actorSub: "operator:ops",
        actorEmail: "",
        action,
        target,
        ip: "203.0.113.9",
        userAgent: "portfolio-cli",
        detail: { requester: "bob@acme.test", scope: "read" }
      })
      yield* Effect.flatMap(MemoryWorld, (ref) =>
        Ref.update(ref, (w) => ({
          ...w,
          gatewayEvents: [
            byOperator(Acme.tenantId, "pat_request_approved", "req-acme", Date.now() + 120_000),
            byOperator(Globex.tenantId, "partner_client_created", "service-partner-globex-erp", Date.now() + 120_000)
          ]
        })))
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const log = yield* admin.get("/console/admin/security")
      expect(log.html).toContain("pat_request_approved")
      expect(log.html).toContain("operator:ops")
      expect(log.html).toContain("203.0.113.9")
      expect(log.html).not.toContain("service-partner-globex-erp")
      expect(log.html.indexOf("pat_request_approved")).toBeLessThan(log.html.indexOf("sign_in"))
    }))
})
