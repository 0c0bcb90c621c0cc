import { describe, expect, it } from "@effect/vitest"
import { Invitation } from "@portfolio/domain"
import { DateTime, Duration, Effect, Exit, Ref } from "effect"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import { createInvitation, listInvitations, revokeInvitation } from "../../src/usecases/Invitations.js"
import { adminOf, invite, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

const start = DateTime.makeUnsafe("2026-07-01T09:00:00.000Z")
const atStart = TestClock.setTime(DateTime.toEpochMillis(start))

describe("createInvitation", () => {
  it.effect("creates a PENDING invitation valid exactly 7 days, trimmed, from the caller's e-mail, and mails a magic link", () =>
    Effect.gen(function*() {
      yield* atStart
      const { caller } = yield* tenantWithAdmin("acme", "Boss@Acme.test")
      const invitation = yield* createInvitation(caller, invite("  Jane.Doe@Example.COM ", "viewer"))
      expect(invitation).toEqual(
        new Invitation({
          id: invitation.id,
          email: "Jane.Doe@Example.COM",
          arbRole: "viewer",
          status: "PENDING",
          invitedByEmail: "Boss@Acme.test",
          createdAt: start,
          expiresAt: DateTime.makeUnsafe("2026-07-08T09:00:00.000Z"),
          acceptedAt: null,
          revokedAt: null
        })
      )
      const state = yield* Ref.get(yield* MemoryStore)
      // The first mail is the admin's welcome link (createTenant).
      expect(state.mail.map((m) => m.to)).toEqual(["Boss@Acme.test", "Jane.Doe@Example.COM"])
      const mail = state.mail[1]!
      expect(mail.to).toBe("Jane.Doe@Example.COM")
      expect(mail.subject).toBe("Boss@Acme.test invited you to join acme on Architecture Portfolio")
      const token = tokenOf(mail.text)
      expect(mail.text).toContain(`https://portfolio.example/accept/${token}`)
      expect(mail.html).toContain(`href="https://portfolio.example/accept/${token}"`)
      expect(Buffer.from(token, "base64url")).toHaveLength(32)
      // Only the hash is kept.
      expect(state.invitations.find((row) => row.record.id === invitation.id)!.tokenHash).toBe(createHash("sha256").update(token).digest("hex"))
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("accepts each of the six roles", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      const roles = ["tenant-admin", "architect", "portfolio-manager", "contributor", "viewer", "arb-member"] as const
      for (const role of roles) {
        const invitation = yield* createInvitation(caller, invite(`${role}@example.com`, role))
        expect(invitation.arbRole).toBe(role)
      }
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("refuses a malformed e-mail, an unknown role and an existing member with INVALID_INVITATION_PARAM", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme", "boss@acme.test")
      const before = yield* Ref.get(yield* MemoryStore)
      const malformed = yield* Effect.flip(createInvitation(caller, invite("not-an-email")))
      expect(malformed).toMatchObject({ _tag: "InvalidInvitationParam", errorCode: "INVALID_INVITATION_PARAM", detail: "email: not a valid e-mail address." })
      const role = yield* Effect.flip(createInvitation(caller, invite("jane@example.com", "owner")))
      expect(role).toMatchObject({
        _tag: "InvalidInvitationParam",
        detail: "arbRole: 'owner' is not an assignable role; use one of tenant-admin, architect, portfolio-manager, contributor, viewer, arb-member."
      })
      const member = yield* Effect.flip(createInvitation(caller, invite(" BOSS@acme.TEST ")))
      expect(member).toMatchObject({ _tag: "InvalidInvitationParam", detail: "email: this person is already a member of the tenant." })
      const state = yield* Ref.get(yield* MemoryStore)
      expect(state.invitations).toEqual(before.invitations)
      expect(state.mail).toEqual(before.mail)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("gives ALREADY_INVITED for a second PENDING invitation, compared case-insensitively, until the first expires", () =>
    Effect.gen(function*() {
      yield* atStart
      const { caller, welcome } = yield* tenantWithAdmin("acme")
      const first = yield* createInvitation(caller, invite("jane@example.com"))
      const second = yield* Effect.flip(createInvitation(caller, invite("JANE@example.com", "viewer")))
      expect(second).toMatchObject({ _tag: "AlreadyInvited", errorCode: "ALREADY_INVITED", detail: "A PENDING invitation already exists for this e-mail." })
      yield* TestClock.adjust(Duration.subtract(Duration.days(7), Duration.millis(1)))
      expect((yield* Effect.flip(createInvitation(caller, invite("jane@example.com"))))._tag).toBe("AlreadyInvited")
      yield* TestClock.adjust(Duration.millis(1))
      const renewed = yield* createInvitation(caller, invite("Jane@Example.com"))
      expect(renewed.status).toBe("PENDING")
      const listed = (yield* listInvitations(caller)).filter((i) => i.id !== welcome?.invitationId)
      expect(listed.map((i) => [i.id, i.status])).toEqual([[renewed.id, "PENDING"], [first.id, "EXPIRED"]])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("the same e-mail can be invited in two tenants", () =>
    Effect.gen(function*() {
      const a = yield* tenantWithAdmin("acme")
      const b = yield* tenantWithAdmin("globex")
      yield* createInvitation(a.caller, invite("jane@example.com"))
      const other = yield* createInvitation(b.caller, invite("jane@example.com"))
      expect(other.status).toBe("PENDING")
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("allows only a tenant-admin with a write scope", () =>
    Effect.gen(function*() {
      const { admin, tenant, welcome } = yield* tenantWithAdmin("acme")
      const architect = yield* Effect.flip(createInvitation(adminOf(tenant.id, admin.userSub, "write", "architect"), invite("jane@example.com")))
      expect(architect).toMatchObject({
        _tag: "InsufficientScope",
        detail: "role 'architect' does not allow POST /tenant/invitations, which requires the tenant-admin role"
      })
      const read = yield* Effect.flip(createInvitation(adminOf(tenant.id, admin.userSub, "read"), invite("jane@example.com")))
      expect(read).toMatchObject({
        _tag: "InsufficientScope",
        detail: "token scope 'read' does not allow POST /tenant/invitations, which requires 'write'"
      })
      expect((yield* Effect.flip(listInvitations(adminOf(tenant.id, admin.userSub, "read", "contributor"))))._tag).toBe("InsufficientScope")
      // Only the admin's own welcome link is listed: nothing was invited.
      expect((yield* listInvitations(adminOf(tenant.id, admin.userSub, "read"))).map((i) => i.id)).toEqual([welcome?.invitationId])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("refuses a caller who is no longer an active member", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("acme")
      const ghost = yield* Effect.flip(createInvitation(adminOf(tenant.id, "someone-else"), invite("jane@example.com")))
      expect(ghost).toMatchObject({ _tag: "Unauthenticated", errorCode: "UNAUTHENTICATED", detail: "The token has been revoked." })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("leaves no invitation behind when the mail cannot be sent", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      const store = yield* MemoryStore
      const before = (yield* Ref.get(store)).invitations
      yield* Ref.update(store, (s) => ({ ...s, mailerDown: true }))
      const exit = yield* Effect.exit(createInvitation(caller, invite("jane@example.com")))
      expect(Exit.isFailure(exit) && !Exit.hasInterrupts(exit)).toBe(true)
      expect((yield* Ref.get(store)).invitations).toEqual(before)
      yield* Ref.update(store, (s) => ({ ...s, mailerDown: false }))
      expect((yield* createInvitation(caller, invite("jane@example.com"))).status).toBe("PENDING")
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("invitation rate", () => {
  it.effect("allows the configured number of new invitations per tenant per hour, then 429 until the oldest leaves the hour", () =>
    Effect.gen(function*() {
      yield* atStart
      const { caller } = yield* tenantWithAdmin("acme")
      const other = yield* tenantWithAdmin("globex")
      yield* createInvitation(caller, invite("a@example.com"))
      yield* TestClock.adjust(Duration.minutes(10))
      yield* createInvitation(caller, invite("b@example.com"))
      // A refused invitation is not counted.
      expect((yield* Effect.flip(createInvitation(caller, invite("b@example.com"))))._tag).toBe("AlreadyInvited")
      yield* createInvitation(caller, invite("c@example.com"))
      const limited = yield* Effect.flip(createInvitation(caller, invite("d@example.com")))
      expect(limited).toMatchObject({
        _tag: "RateLimited",
        errorCode: "RATE_LIMITED",
        detail: "At most 3 invitations per tenant per hour; the next one is possible at 2026-07-01T10:00:00.000Z."
      })
      // A duplicate is no new invitation: the hour's budget spent, it is still told apart.
      expect((yield* Effect.flip(createInvitation(caller, invite("B@example.com"))))._tag).toBe("AlreadyInvited")
      // Another tenant has its own budget.
      expect((yield* createInvitation(other.caller, invite("d@example.com"))).status).toBe("PENDING")
      yield* TestClock.adjust(Duration.minutes(50))
      expect((yield* createInvitation(caller, invite("d@example.com"))).status).toBe("PENDING")
      expect((yield* Effect.flip(createInvitation(caller, invite("e@example.com"))))._tag).toBe("RateLimited")
    }).pipe(Effect.provide(MemoryLayer({ invitationsPerTenantPerHour: 3 }))))
})

describe("listInvitations", () => {
  it.effect("lists every invitation of the caller's tenant only, newest first, with its computed status", () =>
    Effect.gen(function*() {
      yield* atStart
      const { caller, welcome } = yield* tenantWithAdmin("acme")
      const other = yield* tenantWithAdmin("globex")
      yield* createInvitation(other.caller, invite("elsewhere@example.com"))
      const expiring = yield* createInvitation(caller, invite("old@example.com"))
      yield* TestClock.adjust(Duration.days(1))
      const revoked = yield* createInvitation(caller, invite("revoked@example.com"))
      yield* TestClock.adjust(Duration.hours(1))
      const pending = yield* createInvitation(caller, invite("pending@example.com"))
      yield* revokeInvitation(caller, revoked.id)
      yield* TestClock.adjust(Duration.days(6))
      const all = yield* listInvitations(caller)
      // The admin's welcome link, made with the tenant, is listed too; it expired meanwhile.
      expect(all.filter((i) => i.id === welcome?.invitationId).map((i) => [i.email, i.arbRole, i.status])).toEqual([
        ["admin@acme.test", "tenant-admin", "EXPIRED"]
      ])
      const listed = all.filter((i) => i.id !== welcome?.invitationId)
      expect(listed.map((i) => [i.email, i.status])).toEqual([
        ["pending@example.com", "PENDING"],
        ["revoked@example.com", "REVOKED"],
        ["old@example.com", "EXPIRED"]
      ])
      expect(listed[1]!.revokedAt).toEqual(DateTime.makeUnsafe("2026-07-02T10:00:00.000Z"))
      expect(listed[2]).toEqual(new Invitation({ ...expiring, status: "EXPIRED" }))
      expect(listed[0]).toEqual(pending)
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("revokeInvitation", () => {
  it.effect("revokes a PENDING invitation once; unknown and other tenants' ids are NOT_FOUND alike", () =>
    Effect.gen(function*() {
      yield* atStart
      const { caller } = yield* tenantWithAdmin("acme")
      const other = yield* tenantWithAdmin("globex")
      const theirs = yield* createInvitation(other.caller, invite("jane@example.com"))
      const ours = yield* createInvitation(caller, invite("jane@example.com"))
      yield* revokeInvitation(caller, ours.id)
      const again = yield* Effect.flip(revokeInvitation(caller, ours.id))
      expect(again).toMatchObject({ _tag: "InvitationNotPending", errorCode: "INVITATION_NOT_PENDING", detail: "Only a PENDING invitation can be revoked; this one is REVOKED." })
      const foreign = yield* Effect.flip(revokeInvitation(caller, theirs.id))
      const unknown = yield* Effect.flip(revokeInvitation(caller, "7d1f7c9e-2f55-4a0a-9a0e-5d1d6e0f0a11"))
      expect(foreign).toEqual(unknown)
      expect(unknown).toMatchObject({ _tag: "NotFound", detail: "No invitation with this id in the tenant." })
      for (const malformed of ["not-a-uuid", "", "7d1f7c9e-2f55-4a0a-9a0e-5d1d6e0f0a1", `${ours.id} `, "\u0000"]) {
        expect(yield* Effect.flip(revokeInvitation(caller, malformed))).toEqual(unknown)
      }
      const theirsAfter = yield* listInvitations(other.caller)
      expect(theirsAfter.find((i) => i.id === theirs.id)?.status).toBe("PENDING")
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("refuses an expired invitation with INVITATION_NOT_PENDING", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      const invitation = yield* createInvitation(caller, invite("jane@example.com"))
      yield* TestClock.adjust(Duration.days(7))
      const expired = yield* Effect.flip(revokeInvitation(caller, invitation.id))
      expect(expired).toMatchObject({ _tag: "InvitationNotPending", detail: "Only a PENDING invitation can be revoked; this one is EXPIRED." })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("requires write scope and the tenant-admin role", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant } = yield* tenantWithAdmin("acme")
      const invitation = yield* createInvitation(caller, invite("jane@example.com"))
      const read = yield* Effect.flip(revokeInvitation(adminOf(tenant.id, admin.userSub, "read"), invitation.id))
      expect(read.detail).toBe("token scope 'read' does not allow DELETE /tenant/invitations/{id}, which requires 'write'")
      const viewer = yield* Effect.flip(revokeInvitation(adminOf(tenant.id, admin.userSub, "write", "viewer"), invitation.id))
      expect(viewer.detail).toBe("role 'viewer' does not allow DELETE /tenant/invitations/{id}, which requires the tenant-admin role")
    }).pipe(Effect.provide(MemoryLayer())))
})
