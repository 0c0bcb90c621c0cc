import { describe, expect, it } from "@effect/vitest"
import { Member, TenantMember } from "@portfolio/domain"
import { DateTime, Duration, Effect, Option, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import { acceptInvitation, inspectInvitationLink } from "../../src/usecases/Acceptance.js"
import { createInvitation, listInvitations, revokeInvitation } from "../../src/usecases/Invitations.js"
import { listMembers, removeMember } from "../../src/usecases/Members.js"
import { provisionSsoMember } from "../../src/usecases/Tenants.js"
import { IdentityProvider } from "../../src/ports/IdentityProvider.js"
import { MemberRepository } from "../../src/ports/MemberRepository.js"
import { TenantRepository } from "../../src/ports/TenantRepository.js"
import { invite, pageClient, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

const password = Redacted.make("correct horse battery staple")
const lastToken = Effect.gen(function*() {
  const state = yield* Ref.get(yield* MemoryStore)
  return tokenOf(state.mail.at(-1)!.text)
})
const unusable = { _tag: "NotFound", detail: "This invitation link is not valid." }

describe("acceptInvitation", () => {
  it.effect("creates the account then, sets its password, consumes the link and adds an INVITATION member with the role", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const { caller } = yield* tenantWithAdmin("acme")
      yield* createInvitation(caller, invite("Jane@Example.com", "portfolio-manager"))
      const store = yield* MemoryStore
      expect((yield* Ref.get(store)).accounts.map((a) => a.email)).toEqual(["admin@acme.test"])
      const token = yield* lastToken
      expect(yield* inspectInvitationLink(token)).toEqual({
        email: "Jane@Example.com",
        tenantSlug: "acme",
        arbRole: "portfolio-manager",
        alreadyMember: false,
        hasPassword: false
      })
      yield* TestClock.adjust(Duration.hours(2))
      const member = yield* acceptInvitation(token, password, pageClient)
      const account = (yield* Ref.get(store)).accounts.find((a) => a.email === "Jane@Example.com")
      expect(account?.password).toBe("correct horse battery staple")
      expect(member).toEqual(
        new Member({
          userSub: account!.subject,
          userEmail: "Jane@Example.com",
          arbRole: "portfolio-manager",
          source: "INVITATION",
          grantedAt: DateTime.makeUnsafe("2026-07-01T11:00:00.000Z")
        })
      )
      expect((yield* listMembers(caller))[0]).toEqual(member)
      const accepted = (yield* listInvitations(caller)).find((i) => i.email === "Jane@Example.com")
      expect(accepted?.status).toBe("ACCEPTED")
      expect(accepted?.acceptedAt).toEqual(DateTime.makeUnsafe("2026-07-01T11:00:00.000Z"))
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("records invitation_accepted once, with the page's address and user agent, and nothing for a refused password", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const { caller } = yield* tenantWithAdmin("acme")
      const invitation = yield* createInvitation(caller, invite("jane@example.com", "architect"))
      const token = yield* lastToken
      const store = yield* MemoryStore
      yield* Effect.flip(acceptInvitation(token, Redacted.make("short"), pageClient))
      expect((yield* Ref.get(store)).securityEvents).toEqual([])
      const member = yield* acceptInvitation(token, password, { ip: "198.51.100.4", userAgent: "Firefox/140" })
      const events = (yield* Ref.get(store)).securityEvents
      expect(events).toEqual([{
        id: expect.any(String),
        tenantId: caller.tenantId,
        at: DateTime.makeUnsafe("2026-07-01T09:00:00.000Z"),
        actorSub: member.userSub,
        actorEmail: "jane@example.com",
        action: "invitation_accepted",
        target: invitation.id,
        ip: "198.51.100.4",
        userAgent: "Firefox/140",
        detail: { role: "architect", kind: "invitation" }
      }])
      expect(JSON.stringify(events)).not.toContain(Redacted.value(password))
      expect(JSON.stringify(events)).not.toContain(token)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("records a welcome link's acceptance as kind welcome, by the existing member", () =>
    Effect.gen(function*() {
      const { admin, caller, welcome } = yield* tenantWithAdmin("acme")
      yield* acceptInvitation(yield* lastToken, password, pageClient)
      expect((yield* Ref.get(yield* MemoryStore)).securityEvents).toMatchObject([{
        tenantId: caller.tenantId,
        actorSub: admin.userSub,
        actorEmail: "admin@acme.test",
        target: welcome!.invitationId,
        detail: { role: "tenant-admin", kind: "welcome" }
      }])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("refuses a used, revoked, expired or unknown link with the same failure", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      yield* createInvitation(caller, invite("used@example.com"))
      const used = yield* lastToken
      yield* acceptInvitation(used, password, pageClient)
      expect(yield* Effect.flip(acceptInvitation(used, password, pageClient))).toMatchObject(unusable)
      expect(yield* Effect.flip(inspectInvitationLink(used))).toMatchObject(unusable)

      const revoked = yield* createInvitation(caller, invite("revoked@example.com"))
      const revokedToken = yield* lastToken
      yield* revokeInvitation(caller, revoked.id)
      expect(yield* Effect.flip(inspectInvitationLink(revokedToken))).toMatchObject(unusable)
      expect(yield* Effect.flip(acceptInvitation(revokedToken, password, pageClient))).toMatchObject(unusable)

      yield* createInvitation(caller, invite("late@example.com"))
      const late = yield* lastToken
      yield* TestClock.adjust(Duration.days(7))
      expect(yield* Effect.flip(inspectInvitationLink(late))).toMatchObject(unusable)
      expect(yield* Effect.flip(acceptInvitation(late, password, pageClient))).toMatchObject(unusable)

      expect(yield* Effect.flip(acceptInvitation("A".repeat(43), password, pageClient))).toMatchObject(unusable)
      expect((yield* listMembers(caller)).map((m) => m.userEmail)).toEqual(["used@example.com", "admin@acme.test"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("refuses a password the rule refuses, judged with the invitee's address and workspace, and leaves the invitation PENDING", () =>
    Effect.gen(function*() {
      const { caller, welcome } = yield* tenantWithAdmin("acme-corp")
      const invitation = yield* createInvitation(caller, invite("jane.doe@example.com"))
      const token = yield* lastToken
      const refusal = (typed: string) => Effect.flip(acceptInvitation(token, Redacted.make(typed), pageClient))
      expect(yield* refusal("short")).toMatchObject({ _tag: "InvalidRequest", detail: expect.stringContaining("too short") })
      expect(yield* refusal("x".repeat(257))).toMatchObject({ _tag: "InvalidRequest", detail: expect.stringContaining("too long") })
      for (const contextual of ["Jane.Doe@Example.com!", "acme-corp 2026", "JaneDoe-AcmeCorp"]) {
        expect(yield* refusal(contextual)).toMatchObject({ _tag: "InvalidRequest", detail: expect.stringContaining("words from your invitation") })
      }
      // A link that cannot be used says so first, whatever the password.
      expect(yield* Effect.flip(acceptInvitation("A".repeat(43), Redacted.make("short"), pageClient))).toMatchObject(unusable)
      const statuses = Object.fromEntries((yield* listInvitations(caller)).map((i) => [i.id, i.status]))
      expect(statuses).toEqual({ [invitation.id]: "PENDING", [welcome!.invitationId]: "PENDING" })
      expect((yield* Ref.get(yield* MemoryStore)).accounts).toHaveLength(1)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("answers UNAVAILABLE when the identity provider is down, and leaves the invitation PENDING and its link usable", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      const invitation = yield* createInvitation(caller, invite("jane@example.com"))
      const token = yield* lastToken
      const store = yield* MemoryStore
      yield* Ref.update(store, (s) => ({ ...s, identityDown: true }))
      const refused = yield* Effect.flip(acceptInvitation(token, password, pageClient))
      expect(refused).toMatchObject({
        _tag: "Unavailable",
        errorCode: "UNAVAILABLE",
        detail: "The identity provider is unavailable; nothing was changed. Retry shortly."
      })
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("PENDING")
      expect((yield* listMembers(caller)).map((m) => m.userEmail)).toEqual(["admin@acme.test"])
      // Which form the page shows depends on the account, which cannot be read now either.
      expect((yield* Effect.flip(inspectInvitationLink(token)))._tag).toBe("Unavailable")
      yield* Ref.update(store, (s) => ({ ...s, identityDown: false }))
      expect(yield* inspectInvitationLink(token)).toMatchObject({ email: "jane@example.com" })
      expect((yield* acceptInvitation(token, password, pageClient)).userEmail).toBe("jane@example.com")
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("reuses the global account of a person already known in another tenant", () =>
    Effect.gen(function*() {
      const acme = yield* tenantWithAdmin("acme", "jane@example.com")
      const globex = yield* tenantWithAdmin("globex")
      yield* createInvitation(globex.caller, invite("JANE@example.com"))
      const member = yield* acceptInvitation(yield* lastToken, password, pageClient)
      expect(member.userSub).toBe(acme.admin.userSub)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("only sets the password of a person who became a member meanwhile: the link is consumed, the membership stays as it is", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      const invitation = yield* createInvitation(caller, invite("jane@example.com", "architect"))
      const token = yield* lastToken
      const sso = yield* provisionSsoMember({ slug: "acme", userSub: "oidc|jane", email: "jane@example.com", arbRole: "viewer" })
      expect(yield* inspectInvitationLink(token)).toEqual({
        email: "jane@example.com",
        tenantSlug: "acme",
        arbRole: "architect",
        alreadyMember: true,
        hasPassword: false
      })
      // The membership as it was: no second member, no role change, no new source.
      expect(yield* acceptInvitation(token, password, pageClient)).toEqual(sso.member)
      expect((yield* listMembers(caller)).filter((m) => m.userEmail === "jane@example.com")).toEqual([sso.member])
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("ACCEPTED")
      const account = (yield* Ref.get(yield* MemoryStore)).accounts.find((a) => a.email === "jane@example.com")
      expect(account?.password).toBe("correct horse battery staple")
      expect(yield* Effect.flip(acceptInvitation(token, password, pageClient))).toMatchObject(unusable)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("still rolls everything back when the person becomes a member while the link is being accepted", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      const invitation = yield* createInvitation(caller, invite("jane@example.com"))
      const token = yield* lastToken
      // The membership appears after the link was read and before the member is written.
      const members = yield* MemberRepository
      const tenants = yield* TenantRepository
      const racing = MemberRepository.of({
        ...members,
        insert: (record) =>
          Effect.andThen(
            provisionSsoMember({ slug: "acme", userSub: "oidc|jane", email: "jane@example.com", arbRole: "viewer" }).pipe(
              Effect.provideService(MemberRepository, members),
              Effect.provideService(TenantRepository, tenants),
              Effect.orDie
            ),
            members.insert(record)
          )
      })
      expect(yield* Effect.flip(acceptInvitation(token, password, pageClient).pipe(Effect.provideService(MemberRepository, racing)))).toMatchObject(unusable)
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("PENDING")
    }).pipe(Effect.provide(MemoryLayer())))
})

/**
 * Jane, tenant-admin of acme who set her password through her welcome link, invited to globex as
 * an architect: the e-mail's account has a password already.
 */
const janeInvitedToGlobex = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
  const acme = yield* tenantWithAdmin("acme", "jane@example.com")
  yield* acceptInvitation(yield* lastToken, password, pageClient)
  yield* TestClock.adjust(Duration.hours(1))
  const globex = yield* tenantWithAdmin("globex")
  const invitation = yield* createInvitation(globex.caller, invite("Jane@Example.com", "architect"))
  return { acme, globex, invitation, token: yield* lastToken }
})

const janeAccount = Effect.map(MemoryStore, Ref.get).pipe(
  Effect.flatten,
  Effect.map((s) => s.accounts.find((a) => a.email === "jane@example.com")!)
)
const signsInWith = (typed: string) =>
  Effect.flatMap(IdentityProvider, (identity) => identity.verifyPassword("jane@example.com", Redacted.make(typed))).pipe(Effect.map(Option.isSome))
const wrong = { _tag: "Unauthenticated", detail: "The password is not right." }

describe("acceptInvitation for an account that already has a password", () => {
  it.effect("asks for that password, joins with it, and leaves the password as it was", () =>
    Effect.gen(function*() {
      const { acme, globex, invitation, token } = yield* janeInvitedToGlobex
      const before = yield* janeAccount
      expect(before.passwordSetAt).toEqual(DateTime.makeUnsafe("2026-07-01T09:00:00.000Z"))
      expect(yield* inspectInvitationLink(token)).toEqual({
        email: "Jane@Example.com",
        tenantSlug: "globex",
        arbRole: "architect",
        alreadyMember: false,
        hasPassword: true
      })
      yield* TestClock.adjust(Duration.hours(1))
      const member = yield* acceptInvitation(token, password, pageClient)
      expect(member).toEqual(
        new Member({
          userSub: acme.admin.userSub,
          userEmail: "Jane@Example.com",
          arbRole: "architect",
          source: "INVITATION",
          grantedAt: DateTime.makeUnsafe("2026-07-01T11:00:00.000Z")
        })
      )
      expect((yield* listMembers(globex.caller)).map((m) => m.userEmail)).toEqual(["Jane@Example.com", "admin@globex.test"])
      expect((yield* listInvitations(globex.caller)).find((i) => i.id === invitation.id)?.status).toBe("ACCEPTED")
      // Not set again: the same password, set at the same time as before.
      expect(yield* janeAccount).toEqual(before)
      expect(yield* signsInWith("correct horse battery staple")).toBe(true)
      expect(yield* signsInWith("a brand new passphrase")).toBe(false)
      expect((yield* Ref.get(yield* MemoryStore)).securityEvents.at(-1)).toMatchObject({
        tenantId: globex.caller.tenantId,
        actorSub: acme.admin.userSub,
        action: "invitation_accepted",
        target: invitation.id
      })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("refuses another password, rule or no rule, changing nothing but the count, which it records without the password", () =>
    Effect.gen(function*() {
      const { globex, invitation, token } = yield* janeInvitedToGlobex
      const before = yield* janeAccount
      const store = yield* MemoryStore
      const eventsBefore = (yield* Ref.get(store)).securityEvents.length
      // What a new password would have been, and one the password rule would refuse: both are only wrong.
      for (const typed of ["a brand new passphrase", "short"]) {
        expect(yield* Effect.flip(acceptInvitation(token, Redacted.make(typed), pageClient))).toMatchObject(wrong)
      }
      expect((yield* listInvitations(globex.caller)).find((i) => i.id === invitation.id)?.status).toBe("PENDING")
      expect((yield* listMembers(globex.caller)).map((m) => m.userEmail)).toEqual(["admin@globex.test"])
      expect(yield* janeAccount).toEqual(before)
      expect(yield* signsInWith("correct horse battery staple")).toBe(true)
      expect(yield* signsInWith("a brand new passphrase")).toBe(false)
      const events = (yield* Ref.get(store)).securityEvents.slice(eventsBefore)
      expect(events).toEqual([1, 2].map((wrongPasswords) => ({
        id: expect.any(String),
        tenantId: globex.caller.tenantId,
        at: DateTime.makeUnsafe("2026-07-01T10:00:00.000Z"),
        actorSub: null,
        actorEmail: "Jane@Example.com",
        action: "invitation_password_refused",
        target: invitation.id,
        ip: pageClient.ip,
        userAgent: pageClient.userAgent,
        detail: { role: "architect", kind: "invitation", wrongPasswords }
      })))
      expect(JSON.stringify(events)).not.toContain("brand new")
      // An outage is no wrong password: nothing counted, and the link still takes the right one.
      yield* Ref.update(store, (s) => ({ ...s, identityDown: true }))
      expect((yield* Effect.flip(acceptInvitation(token, Redacted.make("a brand new passphrase"), pageClient)))._tag).toBe("Unavailable")
      yield* Ref.update(store, (s) => ({ ...s, identityDown: false }))
      expect((yield* Ref.get(store)).securityEvents.length).toBe(eventsBefore + 2)
      expect((yield* acceptInvitation(token, password, pageClient)).arbRole).toBe("architect")
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("kills the link at the fifth wrong password: the right one then meets the dead link's answer", () =>
    Effect.gen(function*() {
      const { globex, invitation, token } = yield* janeInvitedToGlobex
      for (let i = 1; i <= 5; i++) {
        expect(yield* Effect.flip(acceptInvitation(token, Redacted.make(`guess number ${i} of five`), pageClient))).toMatchObject(wrong)
      }
      expect(yield* Effect.flip(acceptInvitation(token, password, pageClient))).toMatchObject(unusable)
      expect(yield* Effect.flip(inspectInvitationLink(token))).toMatchObject(unusable)
      expect((yield* listInvitations(globex.caller)).find((i) => i.id === invitation.id)?.status).toBe("REVOKED")
      expect((yield* listMembers(globex.caller)).map((m) => m.userEmail)).toEqual(["admin@globex.test"])
      const refusals = (yield* Ref.get(yield* MemoryStore)).securityEvents.filter((e) => e.action === "invitation_password_refused")
      expect(refusals.map((e) => e.detail["wrongPasswords"])).toEqual([1, 2, 3, 4, 5])
      // Revoked, the e-mail may be invited again, with a fresh count.
      yield* createInvitation(globex.caller, invite("jane@example.com", "viewer"))
      expect((yield* acceptInvitation(yield* lastToken, password, pageClient)).arbRole).toBe("viewer")
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("provisionSsoMember", () => {
  it.effect("adds an SSO_JIT member on first login and keeps it on the next ones", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const { caller, tenant } = yield* tenantWithAdmin("acme")
      const first = yield* provisionSsoMember({ slug: "acme", userSub: "oidc|42", email: " sso@example.com ", arbRole: "contributor" })
      const expected = new TenantMember({
        tenant,
        member: new Member({ userSub: "oidc|42", userEmail: "sso@example.com", arbRole: "contributor", source: "SSO_JIT", grantedAt: DateTime.makeUnsafe("2026-07-01T09:00:00.000Z") })
      })
      expect(first).toEqual(expected)
      yield* TestClock.adjust(Duration.hours(1))
      expect(yield* provisionSsoMember({ slug: "acme", userSub: "oidc|42", email: "sso@example.com", arbRole: "tenant-admin" })).toEqual(expected)
      expect((yield* listMembers(caller)).map((m) => m.source)).toEqual(["SSO_JIT", "SIGNUP"])
      const clash = yield* Effect.flip(provisionSsoMember({ slug: "acme", userSub: "oidc|43", email: "SSO@example.com", arbRole: "viewer" }))
      expect(clash).toMatchObject({ _tag: "Conflict", detail: "Another active member of the tenant already has this e-mail." })
      const missing = yield* Effect.flip(provisionSsoMember({ slug: "nope", userSub: "oidc|44", email: "x@example.com", arbRole: "viewer" }))
      expect(missing).toMatchObject({ _tag: "NotFound", detail: "No tenant with the slug 'nope'." })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("refuses a removed userSub with MEMBER_REMOVED until the person accepts a new invitation", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      const sso = yield* provisionSsoMember({ slug: "acme", userSub: "oidc|42", email: "sso@example.com", arbRole: "architect" })
      yield* removeMember(caller, sso.member.userSub)
      const refused = yield* Effect.flip(provisionSsoMember({ slug: "acme", userSub: "oidc|42", email: "sso@example.com", arbRole: "viewer" }))
      expect(refused).toMatchObject({
        _tag: "MemberWasRemoved",
        errorCode: "MEMBER_REMOVED",
        detail: "This person was removed from 'acme'; only a new invitation, once accepted, brings them back."
      })

      yield* createInvitation(caller, invite("jane@example.com", "contributor"))
      const jane = yield* acceptInvitation(yield* lastToken, password, pageClient)
      yield* removeMember(caller, jane.userSub)
      const login = { slug: "acme", userSub: jane.userSub, email: "jane@example.com", arbRole: "viewer" as const }
      expect((yield* Effect.flip(provisionSsoMember(login)))._tag).toBe("MemberWasRemoved")
      expect((yield* listMembers(caller)).map((m) => m.userEmail)).toEqual(["admin@acme.test"])

      yield* createInvitation(caller, invite("jane@example.com", "architect"))
      const back = yield* acceptInvitation(yield* lastToken, password, pageClient)
      expect(back.userSub).toBe(jane.userSub)
      expect((yield* provisionSsoMember(login)).member).toEqual(back)
      // Removed once more, refused once more.
      yield* removeMember(caller, jane.userSub)
      expect((yield* Effect.flip(provisionSsoMember(login)))._tag).toBe("MemberWasRemoved")
    }).pipe(Effect.provide(MemoryLayer())))
})
