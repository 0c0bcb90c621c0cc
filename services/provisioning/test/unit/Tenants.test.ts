import { describe, expect, it } from "@effect/vitest"
import { CreateTenantRequest, Invitation, Member, Tenant, TenantMember, WelcomeLink } from "@portfolio/domain"
import { DateTime, Duration, Effect, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import { acceptInvitation, inspectInvitationLink } from "../../src/usecases/Acceptance.js"
import { createInvitation, listInvitations, nextInvitationSlot } from "../../src/usecases/Invitations.js"
import { listMembers, removeMember } from "../../src/usecases/Members.js"
import { createTenant, findMember, getTenant, listTenantInvitations, resendWelcome } from "../../src/usecases/Tenants.js"
import { adminOf, invite, pageClient, tenantWithAdmin, TestOperator, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

describe("tenants", () => {
  it.effect("createTenant makes the tenant and its first member, tenant-admin with source SIGNUP", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const at = DateTime.makeUnsafe("2026-07-01T09:00:00.000Z")
      const created = yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "Boss@Acme.test" }), TestOperator)
      expect(created.tenant).toEqual(new Tenant({ id: created.tenant.id, slug: "acme", createdAt: at }))
      expect(created.admin).toEqual(
        new Member({ userSub: created.admin.userSub, userEmail: "Boss@Acme.test", arbRole: "tenant-admin", source: "SIGNUP", grantedAt: at })
      )
      expect(created.admin.userSub).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(yield* getTenant("acme")).toEqual(created.tenant)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("createTenant mails the new admin one welcome link: a PENDING tenant-admin invitation by the operator, valid 7 days", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const at = DateTime.makeUnsafe("2026-07-01T09:00:00.000Z")
      const expiresAt = DateTime.makeUnsafe("2026-07-08T09:00:00.000Z")
      const created = yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "Boss@Acme.test" }), "operator:alice")
      expect(created.welcome).toEqual(new WelcomeLink({ invitationId: created.welcome!.invitationId, expiresAt }))

      const state = yield* Ref.get(yield* MemoryStore)
      expect(state.mail).toHaveLength(1)
      const mail = state.mail[0]!
      expect(mail.to).toBe("Boss@Acme.test")
      expect(mail.subject).toBe("Your workspace acme is ready: set your password")
      const token = tokenOf(mail.text)
      expect(mail.text).toContain(`https://portfolio.example/accept/${token}`)
      expect(mail.text).toContain("8 July 2026 at 09:00 UTC")
      expect(mail.html).toContain(`href="https://portfolio.example/accept/${token}"`)
      expect(Buffer.from(token, "base64url")).toHaveLength(32)
      // Only the hash is kept, as for any invitation.
      expect(state.invitations.map((row) => [row.record.kind, row.tokenHash])).toEqual([
        ["welcome", createHash("sha256").update(token).digest("hex")]
      ])

      const invitation = new Invitation({
        id: created.welcome!.invitationId,
        email: "Boss@Acme.test",
        arbRole: "tenant-admin",
        status: "PENDING",
        invitedByEmail: "operator:alice",
        createdAt: at,
        expiresAt,
        acceptedAt: null,
        revokedAt: null
      })
      // Listed with the tenant's invitations, for the operator and for the tenant's admins.
      expect(yield* listTenantInvitations("acme")).toEqual([invitation])
      expect(yield* listInvitations(adminOf(created.tenant.id, created.admin.userSub, "read"))).toEqual([invitation])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("the welcome link sets the admin's password and leaves their one membership as it is", () =>
    Effect.gen(function*() {
      const { admin, caller, welcome } = yield* tenantWithAdmin("acme", "Boss@Acme.test")
      const store = yield* MemoryStore
      const token = tokenOf((yield* Ref.get(store)).mail[0]!.text)
      expect(yield* inspectInvitationLink(token)).toEqual({
        email: "Boss@Acme.test",
        tenantSlug: "acme",
        arbRole: "tenant-admin",
        alreadyMember: true,
        hasPassword: false
      })
      yield* TestClock.adjust(Duration.hours(1))
      expect(yield* acceptInvitation(token, Redacted.make("correct horse battery staple"), pageClient)).toEqual(admin)
      const state = yield* Ref.get(store)
      expect(state.accounts).toEqual([{
        subject: admin.userSub,
        email: "Boss@Acme.test",
        password: "correct horse battery staple",
        passwordSetAt: DateTime.makeUnsafe("1970-01-01T01:00:00.000Z")
      }])
      expect(yield* listMembers(caller)).toEqual([admin])
      expect(state.members).toHaveLength(1)
      const [accepted] = yield* listInvitations(caller)
      expect(accepted).toMatchObject({ id: welcome!.invitationId, status: "ACCEPTED", acceptedAt: DateTime.makeUnsafe("1970-01-01T01:00:00.000Z") })
      // Used once.
      expect(yield* Effect.flip(acceptInvitation(token, Redacted.make("another good password"), pageClient))).toMatchObject({
        _tag: "NotFound",
        detail: "This invitation link is not valid."
      })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("createTenant mails nothing when the admin's account already has a password, and again a link when it has none yet", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore
      yield* tenantWithAdmin("acme", "jane@example.com")
      yield* acceptInvitation(tokenOf((yield* Ref.get(store)).mail[0]!.text), Redacted.make("correct horse battery staple"), pageClient)
      const globex = yield* createTenant(new CreateTenantRequest({ slug: "globex", adminEmail: "JANE@example.com" }), TestOperator)
      expect(globex.welcome).toBeNull()
      expect(globex.admin.userSub).toBe((yield* Ref.get(store)).accounts[0]!.subject)
      expect((yield* Ref.get(store)).mail).toHaveLength(1)
      expect(yield* listTenantInvitations("globex")).toEqual([])

      // Someone who never set a password gets a link for each workspace they are made admin of.
      yield* tenantWithAdmin("initech", "bob@example.com")
      const umbrella = yield* createTenant(new CreateTenantRequest({ slug: "umbrella", adminEmail: "bob@example.com" }), TestOperator)
      expect(umbrella.welcome).not.toBeNull()
      expect((yield* Ref.get(store)).mail.map((m) => [m.to, m.subject])).toEqual([
        ["jane@example.com", "Your workspace acme is ready: set your password"],
        ["bob@example.com", "Your workspace initech is ready: set your password"],
        ["bob@example.com", "Your workspace umbrella is ready: set your password"]
      ])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("the welcome link does not count toward the tenant's hourly invitation limit", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const { caller, tenant, welcome } = yield* tenantWithAdmin("acme")
      expect(welcome).not.toBeNull()
      // Nothing counted yet: the next invitation may go now.
      expect(yield* nextInvitationSlot(tenant.id)).toEqual(DateTime.makeUnsafe("2026-07-01T09:00:00.000Z"))
      yield* TestClock.adjust(Duration.minutes(5))
      expect((yield* createInvitation(caller, invite("jane@example.com"))).status).toBe("PENDING")
      expect(yield* Effect.flip(createInvitation(caller, invite("joe@example.com")))).toMatchObject({
        _tag: "RateLimited",
        detail: "At most 1 invitations per tenant per hour; the next one is possible at 2026-07-01T10:05:00.000Z."
      })
    }).pipe(Effect.provide(MemoryLayer({ invitationsPerTenantPerHour: 1 }))))

  it.effect("createTenant leaves nothing behind when the welcome mail cannot be sent", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore
      yield* Ref.update(store, (s) => ({ ...s, mailerDown: true }))
      const refused = yield* Effect.flip(createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "boss@acme.test" }), TestOperator))
      expect(refused).toMatchObject({ _tag: "Unavailable", errorCode: "UNAVAILABLE" })
      const state = yield* Ref.get(store)
      expect({ tenants: state.tenants, members: state.members, accounts: state.accounts, invitations: state.invitations, mail: state.mail })
        .toEqual({ tenants: [], members: [], accounts: [], invitations: [], mail: [] })
      yield* Ref.update(store, (s) => ({ ...s, mailerDown: false }))
      expect((yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "boss@acme.test" }), TestOperator)).welcome).not.toBeNull()
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("the welcome link of a tenant-admin who was removed meanwhile is no longer usable", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore
      const { admin, caller, tenant } = yield* tenantWithAdmin("acme")
      const welcomeToken = tokenOf((yield* Ref.get(store)).mail[0]!.text)
      yield* createInvitation(caller, invite("second@acme.test", "tenant-admin"))
      const second = yield* acceptInvitation(tokenOf((yield* Ref.get(store)).mail.at(-1)!.text), Redacted.make("correct horse battery staple"), pageClient)
      yield* removeMember(adminOf(tenant.id, second.userSub), admin.userSub)
      const unusable = { _tag: "NotFound", detail: "This invitation link is not valid." }
      expect(yield* Effect.flip(inspectInvitationLink(welcomeToken))).toMatchObject(unusable)
      expect(yield* Effect.flip(acceptInvitation(welcomeToken, Redacted.make("a password to come back"), pageClient))).toMatchObject(unusable)
      expect((yield* listMembers(adminOf(tenant.id, second.userSub))).map((m) => m.userEmail)).toEqual(["second@acme.test"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("resendWelcome mails a new link that works while the earlier one no longer does, even after it expired", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const store = yield* MemoryStore
      const { admin, caller, welcome } = yield* tenantWithAdmin("acme", "Boss@Acme.test")
      const first = tokenOf((yield* Ref.get(store)).mail[0]!.text)
      yield* TestClock.adjust(Duration.minutes(1))
      const again = yield* resendWelcome("acme", "boss@acme.test", "operator:alice")
      expect(again.invitationId).not.toBe(welcome!.invitationId)
      expect(again.expiresAt).toEqual(DateTime.makeUnsafe("2026-07-08T09:01:00.000Z"))
      const mail = (yield* Ref.get(store)).mail
      expect(mail.map((m) => [m.to, m.subject])).toEqual([
        ["Boss@Acme.test", "Your workspace acme is ready: set your password"],
        ["boss@acme.test", "Your workspace acme is ready: set your password"]
      ])
      expect(yield* Effect.flip(inspectInvitationLink(first))).toMatchObject({ _tag: "NotFound" })
      expect((yield* listInvitations(caller)).map((i) => [i.status, i.invitedByEmail])).toEqual([["PENDING", "operator:alice"], ["REVOKED", TestOperator]])

      // A week later the second link expired unused: a third one still can be sent, and works.
      yield* TestClock.adjust(Duration.days(8))
      yield* resendWelcome("acme", "Boss@Acme.test", "operator:alice")
      const third = tokenOf((yield* Ref.get(store)).mail.at(-1)!.text)
      expect(yield* acceptInvitation(third, Redacted.make("correct horse battery staple"), pageClient)).toEqual(admin)
      expect((yield* listMembers(caller)).map((m) => m.userEmail)).toEqual(["Boss@Acme.test"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("resendWelcome refuses an account with a password, a member who is not a tenant-admin and an unknown e-mail or tenant, mailing nothing", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore
      const { caller } = yield* tenantWithAdmin("acme", "boss@acme.test")
      yield* acceptInvitation(tokenOf((yield* Ref.get(store)).mail[0]!.text), Redacted.make("correct horse battery staple"), pageClient)
      yield* createInvitation(caller, invite("viewer@acme.test", "viewer"))
      yield* acceptInvitation(tokenOf((yield* Ref.get(store)).mail.at(-1)!.text), Redacted.make("another fine passphrase"), pageClient)
      const sent = (yield* Ref.get(store)).mail.length
      expect(yield* Effect.flip(resendWelcome("acme", "boss@acme.test", TestOperator))).toMatchObject({
        _tag: "Conflict",
        detail: "This account already has a password: its owner signs in with it."
      })
      expect(yield* Effect.flip(resendWelcome("acme", "viewer@acme.test", TestOperator))).toMatchObject({ _tag: "Conflict" })
      expect(yield* Effect.flip(resendWelcome("acme", "nobody@acme.test", TestOperator))).toMatchObject({ _tag: "NotFound" })
      expect(yield* Effect.flip(resendWelcome("globex", "boss@acme.test", TestOperator))).toMatchObject({ _tag: "NotFound" })
      expect((yield* Ref.get(store)).mail).toHaveLength(sent)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("createTenant refuses an existing slug with Conflict and changes nothing", () =>
    Effect.gen(function*() {
      yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "boss@acme.test" }), TestOperator)
      const again = yield* Effect.flip(createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "other@acme.test" }), TestOperator))
      expect(again).toMatchObject({ _tag: "Conflict", errorCode: "CONFLICT", detail: "A tenant with the slug 'acme' already exists." })
      const state = yield* Ref.get(yield* MemoryStore)
      expect(state.members.map((m) => m.member.userEmail)).toEqual(["boss@acme.test"])
      expect(state.accounts.map((a) => a.email)).toEqual(["boss@acme.test"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("createTenant answers UNAVAILABLE when the identity provider is down, and creates nothing", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore
      yield* Ref.update(store, (s) => ({ ...s, identityDown: true }))
      const refused = yield* Effect.flip(createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "boss@acme.test" }), TestOperator))
      expect(refused).toMatchObject({ _tag: "Unavailable", errorCode: "UNAVAILABLE" })
      const state = yield* Ref.get(store)
      expect({ tenants: state.tenants, members: state.members }).toEqual({ tenants: [], members: [] })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("getTenant and findMember answer NotFound for what does not exist", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flip(getTenant("nope"))).toMatchObject({ _tag: "NotFound", detail: "No tenant with the slug 'nope'." })
      yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "boss@acme.test" }), TestOperator)
      expect(yield* Effect.flip(findMember("acme", "jane@example.com"))).toMatchObject({
        _tag: "NotFound",
        detail: "No active member with this e-mail in 'acme'."
      })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("findMember finds an active member case-insensitively, and no longer once removed", () =>
    Effect.gen(function*() {
      const { admin, tenant } = yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "Boss@Acme.test" }), TestOperator)
      expect(yield* findMember("acme", "boss@ACME.test")).toEqual(new TenantMember({ tenant, member: admin }))
      const caller = adminOf(tenant.id, admin.userSub)
      yield* createInvitation(caller, invite("jane@example.com"))
      const token = tokenOf((yield* Ref.get(yield* MemoryStore)).mail.at(-1)!.text)
      const jane = yield* acceptInvitation(token, Redacted.make("a long enough password"), pageClient)
      expect((yield* findMember("acme", "JANE@example.com")).member).toEqual(jane)
      yield* removeMember(caller, jane.userSub)
      expect((yield* Effect.flip(findMember("acme", "jane@example.com")))._tag).toBe("NotFound")
    }).pipe(Effect.provide(MemoryLayer())))
})
