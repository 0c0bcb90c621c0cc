import { describe, expect, it } from "@effect/vitest"
import { type ArbRole, CallerIdentity, type MemberRemoved } from "@portfolio/domain"
import { SecurityLog } from "@portfolio/platform/security"
import { Context, DateTime, Effect, Layer, Option, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import type { ScimUserInputLike } from "../../src/domain/ScimUser.js"
import { IdentityProvider } from "../../src/ports/IdentityProvider.js"
import { Mailer } from "../../src/ports/Mailer.js"
import { MemberRepository } from "../../src/ports/MemberRepository.js"
import { SsoConnectionRepository } from "../../src/ports/SsoConnectionRepository.js"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation, listInvitations } from "../../src/usecases/Invitations.js"
import { listMembers, removeMember } from "../../src/usecases/Members.js"
import { createScimUser, deleteScimUser, getScimUser, listScimUsers, patchScimUser, replaceScimUser } from "../../src/usecases/ScimUsers.js"
import { joinBySingleSignOn } from "../../src/usecases/SingleSignOn.js"
import { adminOf, apiOrigin, invite, pageClient, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

const start = DateTime.makeUnsafe("2026-07-01T09:00:00.000Z")
const atStart = TestClock.setTime(DateTime.toEpochMillis(start))
const ScimSubject = "scim:6f1c1f4e-4d43-4f0e-9a57-0c2f9f0f3a11"

const scimOf = (tenantId: string) => new CallerIdentity({ tenantId, subject: ScimSubject, role: "scim", scope: "write" })
const store = Effect.flatMap(MemoryStore, Ref.get)
const password = Redacted.make("a long enough password")

/** A tenant with its admin, and the SCIM token's caller. */
const scimTenant = (slug: string) => Effect.map(tenantWithAdmin(slug, `boss@${slug}.test`), (made) => ({ ...made, scim: scimOf(made.tenant.id) }))

const person = (email: string, more: Partial<ScimUserInputLike> = {}): ScimUserInputLike => ({
  userName: email,
  emails: [{ value: email, type: "work", primary: true }],
  ...more
})

const mailsTo = (email: string) => Effect.map(store, (s) => s.mail.filter((m) => m.to.toLowerCase() === email.toLowerCase()))
const acceptLastMailTo = (email: string) =>
  Effect.flatMap(mailsTo(email), (mails) => acceptInvitation(tokenOf(mails.at(-1)!.text), password, pageClient))

const connect = (tenantId: string, domains: ReadonlyArray<string>, defaultRole: ArbRole = "contributor") =>
  Effect.flatMap(SsoConnectionRepository, (connections) =>
    connections.save({
      tenantId,
      issuer: "https://idp.example.com",
      clientId: "portfolio",
      domains,
      defaultRole,
      roleClaim: null,
      roleMap: [],
      required: false,
      breakGlass: [],
      domainsConfirmed: false,
      emailVerifiedClaim: "email_verified",
      secretSetAt: start,
      updatedAt: start
    }, Redacted.make("client secret")))

const replace = (path: string, value: unknown) => ({ op: "Replace", path, value })

describe("createScimUser", () => {
  it.effect("without single sign-on: mails an invitation signed SCIM provisioning; the User turns active when it is accepted", () =>
    Effect.gen(function*() {
      yield* atStart
      const { scim } = yield* scimTenant("acme")
      const created = yield* createScimUser(scim, person("Jane@Example.com", { externalId: "00u1", name: { givenName: "Jane" }, roles: [{ value: "architect" }] }), apiOrigin)
      expect(created).toMatchObject({ userName: "Jane@Example.com", email: "Jane@Example.com", externalId: "00u1", givenName: "Jane", arbRole: "architect", active: false, version: 1, userSub: null })
      const [mail] = yield* mailsTo("jane@example.com")
      expect(mail!.subject).toBe("SCIM provisioning invited you to join acme on Architecture Portfolio")
      expect(mail!.text).toContain("SCIM provisioning invited you to join the workspace acme as architect.")
      const state = yield* store
      const row = state.invitations.find((r) => r.record.id === created.invitationId)!
      expect(row.record).toMatchObject({ email: "Jane@Example.com", arbRole: "architect", invitedByEmail: "SCIM provisioning", kind: "invitation" })
      expect(state.securityEvents.map((e) => [e.action, e.actorSub, e.actorEmail, e.ip])).toEqual([
        ["member_invited", ScimSubject, "", apiOrigin.ip],
        ["scim_user_created", ScimSubject, "", apiOrigin.ip]
      ])
      expect(state.securityEvents[1]!.detail).toEqual({ userName: "Jane@Example.com", email: "Jane@Example.com", role: "architect", person: "invited" })

      const member = yield* acceptLastMailTo("jane@example.com")
      const accepted = yield* getScimUser(scim, created.id)
      expect(accepted).toMatchObject({ active: true, userSub: member.userSub, version: 2 })
      expect(member).toMatchObject({ arbRole: "architect", source: "INVITATION" })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("with a single sign-on connection covering the e-mail's domain: a member at once (SSO_JIT), nothing mailed", () =>
    Effect.gen(function*() {
      const { scim, tenant } = yield* scimTenant("acme")
      yield* connect(tenant.id, ["example.com"], "viewer")
      const created = yield* createScimUser(scim, person("jane@example.com"), apiOrigin)
      expect(created).toMatchObject({ active: true, arbRole: "viewer", invitationId: null })
      const member = (yield* listMembers(adminOf(tenant.id, (yield* store).members[0]!.member.userSub))).find((m) => m.userEmail === "jane@example.com")
      expect(member).toMatchObject({ source: "SSO_JIT", arbRole: "viewer", userSub: created.userSub })
      expect(yield* mailsTo("jane@example.com")).toEqual([])
      expect((yield* store).accounts.map((a) => a.email)).toContain("jane@example.com")
      // Another domain: an invitation, the connection's default role since the User names none.
      const other = yield* createScimUser(scim, person("bob@elsewhere.org"), apiOrigin)
      expect(other).toMatchObject({ active: false, arbRole: "viewer" })
      expect(yield* mailsTo("bob@elsewhere.org")).toHaveLength(1)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("a person removed from the tenant gets an invitation, even where single sign-on covers their domain", () =>
    Effect.gen(function*() {
      const { caller, scim, tenant } = yield* scimTenant("acme")
      yield* createInvitation(caller, invite("jane@example.com"))
      const jane = yield* acceptLastMailTo("jane@example.com")
      yield* removeMember(caller, jane.userSub)
      yield* connect(tenant.id, ["example.com"])
      const created = yield* createScimUser(scim, person("jane@example.com"), apiOrigin)
      expect(created).toMatchObject({ active: false, userSub: null })
      expect(yield* mailsTo("jane@example.com")).toHaveLength(2)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("active: false keeps the User only: no mail, no member", () =>
    Effect.gen(function*() {
      const { scim } = yield* scimTenant("acme")
      const before = yield* store
      const kept = yield* createScimUser(scim, person("jane@example.com", { active: false }), apiOrigin)
      expect(kept).toMatchObject({ active: false, userSub: null, invitationId: null, arbRole: "viewer" })
      const after = yield* store
      expect(after.mail).toEqual(before.mail)
      expect(after.invitations).toEqual(before.invitations)
      expect(after.members).toEqual(before.members)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("409 uniqueness for a userName or e-mail taken, in any case, a member adopted first, or an invitation made elsewhere; nothing mailed", () =>
    Effect.gen(function*() {
      const { caller, scim } = yield* scimTenant("acme")
      yield* createScimUser(scim, person("jane@example.com"), apiOrigin)
      const mailed = (yield* store).mail.length
      const sameName = yield* Effect.flip(createScimUser(scim, person("JANE@example.com", { emails: [{ value: "other@example.com" }] }), apiOrigin))
      expect(sameName).toMatchObject({ status: 409, scimType: "uniqueness", detail: "Another User of the tenant has this userName." })
      const sameEmail = yield* Effect.flip(createScimUser(scim, person("jdoe", { emails: [{ value: "Jane@Example.COM" }] }), apiOrigin))
      expect(sameEmail).toMatchObject({ status: 409, scimType: "uniqueness", detail: "Another User of the tenant has this e-mail." })
      // The tenant's admin joined otherwise: adopted, so found rather than invited.
      expect(yield* Effect.flip(createScimUser(scim, person("jdoe2", { emails: [{ value: "boss@acme.test" }] }), apiOrigin))).toMatchObject({ status: 409, scimType: "uniqueness" })
      yield* createInvitation(caller, invite("pending@example.com"))
      expect(yield* Effect.flip(createScimUser(scim, person("pending@example.com"), apiOrigin))).toMatchObject({ status: 409, scimType: "uniqueness" })
      expect((yield* store).mail).toHaveLength(mailed + 1)
      expect((yield* store).scimUsers.map((u) => u.record.userName).sort()).toEqual(["boss@acme.test", "jane@example.com"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("the tenant's invitations per hour count SCIM's too: over them 429, and no User is left behind", () =>
    Effect.gen(function*() {
      const { scim } = yield* scimTenant("acme")
      yield* createScimUser(scim, person("one@example.com"), apiOrigin)
      const limited = yield* Effect.flip(createScimUser(scim, person("two@example.com"), apiOrigin))
      expect(limited._tag).toBe("RateLimited")
      expect((yield* store).scimUsers.map((u) => u.record.userName)).not.toContain("two@example.com")
    }).pipe(Effect.provide(MemoryLayer({ invitationsPerTenantPerHour: 1 }))))

  it.effect("refuses any caller but a SCIM token, a tenant-admin included", () =>
    Effect.gen(function*() {
      const { caller } = yield* scimTenant("acme")
      expect(yield* Effect.flip(createScimUser(caller, person("jane@example.com"), apiOrigin))).toMatchObject({ _tag: "InsufficientScope" })
      expect(yield* Effect.flip(listScimUsers(caller, {}))).toMatchObject({ _tag: "InsufficientScope" })
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("what a change does to the member", () => {
  /** A tenant with Jane, a SCIM User who is an active member (single sign-on made her one). */
  const withJane = Effect.gen(function*() {
    const made = yield* scimTenant("acme")
    yield* connect(made.tenant.id, ["example.com"])
    const jane = yield* createScimUser(made.scim, person("jane@example.com", { roles: [{ value: "architect" }] }), apiOrigin)
    return { ...made, jane }
  })

  it.effect("deactivation removes the member with member.removed, as the public API does; reactivation mails a new invitation", () =>
    Effect.gen(function*() {
      yield* atStart
      const { jane, scim, tenant } = yield* withJane
      const deactivated = yield* patchScimUser(scim, jane.id, [replace("active", "False")], undefined, apiOrigin)
      expect(deactivated).toMatchObject({ active: false, version: 2, userSub: jane.userSub })
      const state = yield* store
      expect(state.members.find((m) => m.member.userSub === jane.userSub)?.removedAt).toEqual(start)
      expect(state.outbox.map((e: MemberRemoved) => [e.type, e.tenantId, e.userSub])).toEqual([["member.removed", tenant.id, jane.userSub]])
      expect(state.securityEvents.filter((e) => e.action === "member_removed")).toEqual([
        expect.objectContaining({ actorSub: ScimSubject, actorEmail: "", target: jane.userSub, detail: { email: "jane@example.com" } })
      ])
      // Unchanged again: no new version, nothing done.
      expect(yield* patchScimUser(scim, jane.id, [{ op: "replace", value: { active: false } }], undefined, apiOrigin)).toMatchObject({ version: 2 })

      const reactivated = yield* patchScimUser(scim, jane.id, [replace("active", "True")], undefined, apiOrigin)
      expect(reactivated).toMatchObject({ active: false, version: 3 })
      expect(reactivated.invitationId).not.toBeNull()
      expect(yield* mailsTo("jane@example.com")).toHaveLength(1)
      // Pending: a tool that sends active: true again each cycle mails nothing more.
      expect(yield* patchScimUser(scim, jane.id, [replace("active", true)], undefined, apiOrigin)).toMatchObject({ version: 3 })
      expect(yield* mailsTo("jane@example.com")).toHaveLength(1)
      const back = yield* acceptLastMailTo("jane@example.com")
      expect(back.userSub).toBe(jane.userSub)
      expect(yield* getScimUser(scim, jane.id)).toMatchObject({ active: true, version: 4 })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("deactivating a User whose invitation is pending revokes it", () =>
    Effect.gen(function*() {
      const { caller, scim } = yield* scimTenant("acme")
      const bob = yield* createScimUser(scim, person("bob@elsewhere.org"), apiOrigin)
      yield* patchScimUser(scim, bob.id, [replace("active", false)], undefined, apiOrigin)
      const invitation = (yield* listInvitations(caller)).find((i) => i.id === bob.invitationId)
      expect(invitation?.status).toBe("REVOKED")
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("a new role applies to the member at once, or to the pending invitation", () =>
    Effect.gen(function*() {
      const { jane, scim, tenant } = yield* withJane
      yield* patchScimUser(scim, jane.id, [replace('roles[primary eq "True"].value', "tenant-admin")], undefined, apiOrigin)
      const members = yield* MemberRepository
      expect((yield* members.findActiveBySub(tenant.id, jane.userSub!)).pipe((m) => m._tag === "Some" ? m.value.arbRole : null)).toBe("tenant-admin")
      expect((yield* store).securityEvents.filter((e) => e.action === "member_role_changed").map((e) => e.detail))
        .toEqual([{ email: "jane@example.com", from: "architect", to: "tenant-admin" }])
      const bob = yield* createScimUser(scim, person("bob@elsewhere.org"), apiOrigin)
      yield* replaceScimUser(scim, bob.id, person("bob@elsewhere.org", { roles: [{ value: "arb-member" }] }), undefined, apiOrigin)
      expect((yield* store).invitations.find((r) => r.record.id === bob.invitationId)?.record.arbRole).toBe("arb-member")
      // Accepted, the invitation's new role is the member's.
      expect((yield* acceptLastMailTo("bob@elsewhere.org")).arbRole).toBe("arb-member")
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("the tenant's last tenant-admin can be neither demoted nor deactivated nor deleted: 409, nothing changed", () =>
    Effect.gen(function*() {
      const { admin, scim } = yield* scimTenant("acme")
      const boss = (yield* listScimUsers(scim, { filter: 'userName eq "BOSS@acme.test"' })).users[0]!
      expect(boss).toMatchObject({ userSub: admin.userSub, arbRole: "tenant-admin", active: true, version: 1 })
      const before = yield* store
      for (const change of [[replace("roles", [{ value: "viewer" }])], [replace("active", "False")]]) {
        expect(yield* Effect.flip(patchScimUser(scim, boss.id, change, undefined, apiOrigin))).toMatchObject({ _tag: "LastTenantAdmin" })
      }
      expect(yield* Effect.flip(deleteScimUser(scim, boss.id, undefined, apiOrigin))).toMatchObject({ _tag: "LastTenantAdmin" })
      const after = yield* store
      expect(after.members).toEqual(before.members)
      expect(after.scimUsers).toEqual(before.scimUsers)
      expect(after.outbox).toEqual([])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("the e-mail: 400 mutability for an active member; a pending invitation is replaced by one to the new address; otherwise stored", () =>
    Effect.gen(function*() {
      const { caller, jane, scim } = yield* withJane
      const refused = yield* Effect.flip(patchScimUser(scim, jane.id, [replace('emails[type eq "work"].value', "jane.doe@example.com")], undefined, apiOrigin))
      expect(refused).toMatchObject({ status: 400, scimType: "mutability" })
      // The same address in another case is the same account: stored, not refused.
      expect(yield* patchScimUser(scim, jane.id, [replace("emails[primary eq true].value", "Jane@Example.com")], undefined, apiOrigin)).toMatchObject({ email: "Jane@Example.com", active: true })

      const bob = yield* createScimUser(scim, person("bob@elsewhere.org"), apiOrigin)
      const moved = yield* patchScimUser(scim, bob.id, [replace('emails[type eq "work"].value', "robert@elsewhere.org")], undefined, apiOrigin)
      const invitations = yield* listInvitations(caller)
      expect(invitations.find((i) => i.id === bob.invitationId)?.status).toBe("REVOKED")
      expect(invitations.find((i) => i.id === moved.invitationId)).toMatchObject({ email: "robert@elsewhere.org", status: "PENDING" })
      expect(yield* mailsTo("robert@elsewhere.org")).toHaveLength(1)

      const kept = yield* createScimUser(scim, person("kept@elsewhere.org", { active: false }), apiOrigin)
      const stored = yield* patchScimUser(scim, kept.id, [replace("emails", [{ value: "still@elsewhere.org" }])], undefined, apiOrigin)
      expect(stored).toMatchObject({ email: "still@elsewhere.org", invitationId: null, version: 2 })
      expect(yield* mailsTo("still@elsewhere.org")).toEqual([])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("a PUT replaces the attributes and clears those left out; without roles or active the role and the membership stay", () =>
    Effect.gen(function*() {
      const { jane, scim } = yield* withJane
      const named = yield* patchScimUser(scim, jane.id, [{ op: "add", value: { displayName: "Jane D", externalId: "e1" } }], undefined, apiOrigin)
      expect(named).toMatchObject({ displayName: "Jane D", externalId: "e1", version: 2 })
      const replaced = yield* replaceScimUser(scim, jane.id, { userName: "jane", emails: [{ value: "jane@example.com" }] }, undefined, apiOrigin)
      expect(replaced).toMatchObject({ userName: "jane", displayName: null, externalId: null, arbRole: "architect", active: true, version: 3 })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("If-Match that is not the current version is a 412 and changes nothing; the current one passes", () =>
    Effect.gen(function*() {
      const { jane, scim } = yield* withJane
      expect(yield* Effect.flip(patchScimUser(scim, jane.id, [replace("displayName", "x")], 'W/"7"', apiOrigin))).toMatchObject({ status: 412 })
      expect(yield* Effect.flip(deleteScimUser(scim, jane.id, 'W/"2"', apiOrigin))).toMatchObject({ status: 412 })
      expect(yield* getScimUser(scim, jane.id)).toMatchObject({ version: 1, displayName: null, active: true })
      expect(yield* patchScimUser(scim, jane.id, [replace("displayName", "x")], 'W/"1"', apiOrigin)).toMatchObject({ version: 2 })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("DELETE deprovisions the member and the User is gone: 404 everywhere, out of the list, its e-mail free again", () =>
    Effect.gen(function*() {
      const { jane, scim } = yield* withJane
      yield* deleteScimUser(scim, jane.id, undefined, apiOrigin)
      expect((yield* store).outbox.map((e) => e.userSub)).toEqual([jane.userSub])
      const gone = { status: 404, detail: "No User with this id in the tenant." }
      expect(yield* Effect.flip(getScimUser(scim, jane.id))).toMatchObject(gone)
      expect(yield* Effect.flip(patchScimUser(scim, jane.id, [replace("active", true)], undefined, apiOrigin))).toMatchObject(gone)
      expect(yield* Effect.flip(deleteScimUser(scim, jane.id, undefined, apiOrigin))).toMatchObject(gone)
      expect((yield* listScimUsers(scim, {})).users.map((u) => u.userName)).toEqual(["boss@acme.test"])
      expect((yield* store).securityEvents.filter((e) => e.action === "scim_user_deleted")).toHaveLength(1)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("another tenant's User is a 404 as an unknown one", () =>
    Effect.gen(function*() {
      const { jane } = yield* withJane
      const other = yield* scimTenant("globex")
      expect(yield* Effect.flip(getScimUser(other.scim, jane.id))).toMatchObject({ status: 404 })
      expect(yield* Effect.flip(getScimUser(other.scim, "not-a-uuid"))).toMatchObject({ status: 404 })
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("listScimUsers", () => {
  it.effect("adopts every active member first (userName their e-mail), then filters and pages oldest first", () =>
    Effect.gen(function*() {
      yield* atStart
      const { admin, caller, scim } = yield* scimTenant("acme")
      yield* createInvitation(caller, invite("ann@example.com", "viewer"))
      const ann = yield* acceptLastMailTo("ann@example.com")
      yield* TestClock.adjust("1 minute")
      const first = yield* listScimUsers(scim, {})
      expect(first.totalResults).toBe(2)
      // Adopted together, they were made at the same instant: their order is their ids'.
      expect(first.users.map((u) => [u.userName, u.email, u.arbRole, u.active, u.userSub, u.version]).sort()).toEqual([
        ["ann@example.com", "ann@example.com", "viewer", true, ann.userSub, 1],
        ["boss@acme.test", "boss@acme.test", "tenant-admin", true, admin.userSub, 1]
      ])
      expect(first.users.map((u) => u.id)).toEqual(first.users.map((u) => u.id).sort())
      // Adopted once: a second list makes no other.
      expect((yield* listScimUsers(scim, {})).users.map((u) => u.id)).toEqual(first.users.map((u) => u.id))
      yield* TestClock.adjust("1 minute")
      const bob = yield* createScimUser(scim, person("bob@elsewhere.org", { externalId: "ext-bob" }), apiOrigin)
      expect((yield* listScimUsers(scim, { filter: 'emails.value eq "BOB@elsewhere.org"' })).users.map((u) => u.id)).toEqual([bob.id])
      expect((yield* listScimUsers(scim, { filter: 'externalId eq "EXT-BOB"' })).users).toEqual([])
      expect((yield* listScimUsers(scim, { filter: `externalId eq "ext-bob" and id eq "${bob.id}"` })).users.map((u) => u.id)).toEqual([bob.id])
      expect(yield* listScimUsers(scim, { count: "0" })).toEqual({ totalResults: 3, users: [], startIndex: 1 })
      const paged = yield* listScimUsers(scim, { startIndex: "3", count: "5" })
      expect(paged).toMatchObject({ totalResults: 3, startIndex: 3 })
      expect(paged.users.map((u) => u.id)).toEqual([bob.id])
      expect(yield* Effect.flip(listScimUsers(scim, { filter: 'userName co "a"' }))).toMatchObject({ status: 400, scimType: "invalidFilter" })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("a User kept without a member is linked to the member who joins with its e-mail by another door", () =>
    Effect.gen(function*() {
      const { caller, scim } = yield* scimTenant("acme")
      const kept = yield* createScimUser(scim, person("ann@example.com", { active: false }), apiOrigin)
      yield* createInvitation(caller, invite("ann@example.com"))
      const ann = yield* acceptLastMailTo("ann@example.com")
      const listed = (yield* listScimUsers(scim, { filter: 'userName eq "ann@example.com"' })).users
      expect(listed.map((u) => [u.id, u.userSub, u.active, u.version])).toEqual([[kept.id, ann.userSub, true, 2]])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("so is it before a change: activating that User links it to the member, and mails nothing", () =>
    Effect.gen(function*() {
      const { caller, scim } = yield* scimTenant("acme")
      const kept = yield* createScimUser(scim, person("ann@example.com", { active: false }), apiOrigin)
      yield* createInvitation(caller, invite("ann@example.com"))
      const ann = yield* acceptLastMailTo("ann@example.com")
      const mailed = (yield* mailsTo("ann@example.com")).length
      const activated = yield* patchScimUser(scim, kept.id, [replace("active", true)], undefined, apiOrigin)
      expect(activated).toMatchObject({ userSub: ann.userSub, active: true, invitationId: null })
      expect(yield* mailsTo("ann@example.com")).toHaveLength(mailed)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("a member removed by the public API reads active: false, in a new version", () =>
    Effect.gen(function*() {
      const { caller, jane, scim } = yield* Effect.gen(function*() {
        const made = yield* scimTenant("acme")
        yield* connect(made.tenant.id, ["example.com"])
        return { ...made, jane: yield* createScimUser(made.scim, person("jane@example.com"), apiOrigin) }
      })
      yield* removeMember(caller, jane.userSub!)
      // A new version: a tool holding the old ETag must not be told it is unchanged.
      expect(yield* getScimUser(scim, jane.id)).toMatchObject({ active: false, version: 2 })
    }).pipe(Effect.provide(MemoryLayer())))
})

/** The addresses an SMTP server was handed, in order: what no rollback takes back. */
class HandedOver extends Context.Service<HandedOver, Ref.Ref<ReadonlyArray<string>>>()("test/HandedOver") {}

/**
 * The in-memory store with a mailer that hands each message over for good, as SMTP does (the memory
 * double's keeps it in the store, which a rollback undoes), and a security log that fails on `failing`.
 */
const withSmtpAndFailingLog = (failing: string) => {
  const smtp = Layer.effect(Mailer, Effect.map(HandedOver, (handed) => Mailer.of({ send: (message) => Ref.update(handed, (to) => [...to, message.to]) })))
  const log = SecurityLog.of({
    record: (entries) => ([entries].flat().some((entry) => entry.action === failing) ? Effect.die(new Error(`the security log is down (${failing})`)) : Effect.void),
    list: () => Effect.succeed([])
  })
  return Layer.mergeAll(MemoryLayer(), smtp, Layer.succeed(SecurityLog, log)).pipe(Layer.provideMerge(Layer.effect(HandedOver, Ref.make<ReadonlyArray<string>>([]))))
}
const handedTo = (email: string) => Effect.map(Effect.flatMap(HandedOver, Ref.get), (to) => to.filter((address) => address === email))

describe("the invitation mail of a SCIM change", () => {
  it.effect("is the unit of work's last step: a creation that fails after the invitation's rows mails nothing, and leaves no invitation", () =>
    Effect.gen(function*() {
      const { caller, scim } = yield* scimTenant("acme")
      const failed = yield* Effect.exit(createScimUser(scim, person("jane@example.com"), apiOrigin))
      expect(failed._tag).toBe("Failure")
      expect(yield* handedTo("jane@example.com")).toEqual([])
      expect((yield* listInvitations(caller)).filter((i) => i.email === "jane@example.com")).toEqual([])
      expect((yield* store).scimUsers.map((u) => u.record.userName)).toEqual([])
    }).pipe(Effect.provide(withSmtpAndFailingLog("scim_user_created"))))

  it.effect("so is it for a change that invites: an activation that fails afterwards mails nothing", () =>
    Effect.gen(function*() {
      const { caller, scim } = yield* scimTenant("acme")
      const kept = yield* createScimUser(scim, person("jane@example.com", { active: false }), apiOrigin)
      const failed = yield* Effect.exit(patchScimUser(scim, kept.id, [replace("active", true)], undefined, apiOrigin))
      expect(failed._tag).toBe("Failure")
      expect(yield* handedTo("jane@example.com")).toEqual([])
      expect((yield* listInvitations(caller)).filter((i) => i.email === "jane@example.com")).toEqual([])
      expect(yield* getScimUser(scim, kept.id)).toMatchObject({ invitationId: null, version: 1 })
    }).pipe(Effect.provide(withSmtpAndFailingLog("scim_user_updated"))))

  it.effect("and is sent once the rest holds", () =>
    Effect.gen(function*() {
      const { scim } = yield* scimTenant("acme")
      yield* createScimUser(scim, person("jane@example.com"), apiOrigin)
      expect(yield* handedTo("jane@example.com")).toEqual(["jane@example.com"])
    }).pipe(Effect.provide(withSmtpAndFailingLog("none"))))
})

describe("the role of a User who is a member", () => {
  it.effect("is the member's, as single sign-on's claims gave it: read so, and a change back to the User's stored role applies", () =>
    Effect.gen(function*() {
      const { scim, tenant } = yield* scimTenant("acme")
      // Invited through SCIM as an architect; the person then signs in by single sign-on, whose claims map to arb-member.
      const jane = yield* createScimUser(scim, person("jane@example.com", { roles: [{ value: "architect" }] }), apiOrigin)
      const account = yield* Effect.flatMap(IdentityProvider, (identity) => identity.ensureAccount("jane@example.com"))
      yield* joinBySingleSignOn(tenant.id, account, "arb-member", start)
      const linked = (yield* listScimUsers(scim, { filter: 'userName eq "jane@example.com"' })).users[0]!
      expect(linked).toMatchObject({ id: jane.id, userSub: account.subject, active: true, arbRole: "arb-member" })
      expect(yield* getScimUser(scim, jane.id)).toMatchObject({ arbRole: "arb-member" })

      const memberRole = Effect.map(Effect.flatMap(MemberRepository, (members) => members.findActiveBySub(tenant.id, account.subject)), Option.map((m) => m.arbRole))
      const architect = yield* patchScimUser(scim, jane.id, [replace("roles", [{ value: "architect" }])], undefined, apiOrigin)
      expect(architect).toMatchObject({ arbRole: "architect" })
      expect(yield* memberRole).toEqual(Option.some("architect"))
      expect((yield* store).securityEvents.filter((e) => e.action === "member_role_changed").map((e) => e.detail))
        .toEqual([{ email: "jane@example.com", from: "arb-member", to: "architect" }])
      // Unchanged, as the member's role is: nothing done, no new version.
      expect(yield* patchScimUser(scim, jane.id, [replace("roles", [{ value: "architect" }])], undefined, apiOrigin)).toMatchObject({ version: architect.version })
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("getScimUser", () => {
  it.effect("adopts first: a User whose person joined by another door reads linked, and active", () =>
    Effect.gen(function*() {
      const { caller, scim } = yield* scimTenant("acme")
      const kept = yield* createScimUser(scim, person("ann@example.com", { active: false }), apiOrigin)
      yield* createInvitation(caller, invite("ann@example.com", "contributor"))
      const ann = yield* acceptLastMailTo("ann@example.com")
      expect(yield* getScimUser(scim, kept.id)).toMatchObject({ userSub: ann.userSub, active: true, arbRole: "contributor", version: 2 })
    }).pipe(Effect.provide(MemoryLayer())))
})
