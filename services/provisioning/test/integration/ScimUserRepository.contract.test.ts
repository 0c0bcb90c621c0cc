import { expect, layer } from "@effect/vitest"
import { type ArbRole, Member, type Tenant } from "@portfolio/domain"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Fiber, Option } from "effect"
import { randomUUID } from "node:crypto"
import { InvitationLifetime } from "../../src/domain/InvitationRecord.js"
import { InvitationRepository } from "../../src/ports/InvitationRepository.js"
import { MemberRepository } from "../../src/ports/MemberRepository.js"
import { type ScimUserRecord, ScimUserRepository } from "../../src/ports/ScimUserRepository.js"
import { adaptersUnderTest, openUnitOfWork, stillWaiting, storedTenant, t0 } from "../support/AdaptersUnderTest.js"

/** A User of `tenant` made `minutes` after t0, linked to nobody. */
const userOf = (tenant: Tenant, userName: string, minutes = 0, more: Partial<ScimUserRecord> = {}) =>
  Effect.map(newId, (id): ScimUserRecord => ({
    id,
    tenantId: tenant.id,
    userName,
    externalId: null,
    email: userName.includes("@") ? userName : `${userName}@example.com`,
    givenName: null,
    familyName: null,
    formattedName: null,
    displayName: null,
    arbRole: "viewer",
    userSub: null,
    invitationId: null,
    version: 1,
    createdAt: DateTime.add(t0, { minutes }),
    updatedAt: DateTime.add(t0, { minutes }),
    ...more
  }))

const stored = (tenant: Tenant, userName: string, minutes = 0, more: Partial<ScimUserRecord> = {}) =>
  Effect.gen(function*() {
    const user = yield* userOf(tenant, userName, minutes, more)
    yield* (yield* ScimUserRepository).insert(user)
    return user
  })

const joined = (tenant: Tenant, userSub: string, email: string, arbRole: ArbRole = "architect", minutes = 0) =>
  Effect.flatMap(MemberRepository, (members) =>
    members.insert({ tenantId: tenant.id, member: new Member({ userSub, userEmail: email, arbRole, source: "INVITATION", grantedAt: DateTime.add(t0, { minutes }) }) }))

const ids = (users: ReadonlyArray<{ readonly id: string }>) => users.map((u) => u.id)
const everyone = { offset: 0, limit: 100 }

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`ScimUserRepository contract, ${adapters.name}`, (it) => {
    it.effect("keeps a User, found by id within its tenant only; a deleted one, or an id that is no UUID, is none", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const tenant = yield* storedTenant("scim-kept")
        const other = yield* storedTenant("scim-kept-other")
        const ann = yield* stored(tenant, "Ann@Example.com", 0, { externalId: "00u1", givenName: "Ann", familyName: "Lee", formattedName: "Ann Lee", displayName: "Ann", arbRole: "arb-member" })
        expect(yield* users.findById(tenant.id, ann.id)).toEqual(Option.some({ ...ann, active: false }))
        expect(yield* users.lockById(tenant.id, ann.id)).toEqual(Option.some({ ...ann, active: false }))
        expect(yield* users.findById(other.id, ann.id)).toEqual(Option.none())
        expect(yield* users.findById(tenant.id, "not-a-uuid")).toEqual(Option.none())
        expect(yield* users.markDeleted(tenant.id, ann.id, t0)).toBe(true)
        expect(yield* users.markDeleted(tenant.id, ann.id, t0)).toBe(false)
        expect(yield* users.markDeleted(tenant.id, "not-a-uuid", t0)).toBe(false)
        expect(yield* users.findById(tenant.id, ann.id)).toEqual(Option.none())
      }))

    it.effect("userName and e-mail are unique among a tenant's Users, in any case; a deleted User frees them; another tenant has its own", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const tenant = yield* storedTenant("scim-unique")
        const other = yield* storedTenant("scim-unique-other")
        const ann = yield* stored(tenant, "ann@example.com")
        expect(yield* Effect.flip(users.insert(yield* userOf(tenant, "ANN@example.com", 0, { email: "x@example.com" })))).toMatchObject({ _tag: "ScimUserTaken", attribute: "userName" })
        expect(yield* Effect.flip(users.insert(yield* userOf(tenant, "ann", 0, { email: "Ann@Example.COM" })))).toMatchObject({ attribute: "email" })
        const bob = yield* stored(tenant, "bob@example.com")
        expect(yield* Effect.flip(users.update({ ...bob, email: "ANN@example.com", version: 2 }, 1))).toMatchObject({ attribute: "email" })
        yield* stored(other, "ann@example.com")
        yield* users.markDeleted(tenant.id, ann.id, t0)
        const again = yield* stored(tenant, "Ann@example.com")
        expect(Option.map(yield* users.findById(tenant.id, again.id), (u) => u.userName)).toEqual(Option.some("Ann@example.com"))
      }))

    it.effect("one User per member: a second User linked to a member is refused", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const tenant = yield* storedTenant("scim-one-per-member")
        yield* stored(tenant, "ann@example.com", 0, { userSub: "sub-ann" })
        expect(yield* Effect.flip(users.insert(yield* userOf(tenant, "other@example.com", 0, { userSub: "sub-ann" })))).toMatchObject({ _tag: "ScimUserTaken" })
      }))

    it.effect("writes a User whole only at the version expected, never once deleted", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const tenant = yield* storedTenant("scim-versions")
        const ann = yield* stored(tenant, "ann@example.com")
        const renamed = { ...ann, userName: "ann", displayName: "Ann", arbRole: "tenant-admin" as const, version: 2, updatedAt: DateTime.add(t0, { minutes: 5 }) }
        expect(yield* users.update(renamed, 7)).toBe(false)
        expect(yield* users.update(renamed, 1)).toBe(true)
        expect(yield* users.findById(tenant.id, ann.id)).toEqual(Option.some({ ...renamed, active: false }))
        expect(yield* users.update({ ...renamed, version: 3 }, 1)).toBe(false)
        yield* users.markDeleted(tenant.id, ann.id, t0)
        expect(yield* users.update({ ...renamed, version: 3 }, 2)).toBe(false)
      }))

    it.effect("reads active from the members: true exactly while the linked member is active", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const tenant = yield* storedTenant("scim-active")
        const other = yield* storedTenant("scim-active-other")
        yield* joined(tenant, "sub-ann", "ann@example.com")
        yield* joined(other, "sub-bob", "bob@example.com")
        const ann = yield* stored(tenant, "ann@example.com", 0, { userSub: "sub-ann" })
        // Linked to a member of another tenant only: not active here.
        const bob = yield* stored(tenant, "bob@example.com", 0, { userSub: "sub-bob" })
        const active = (id: string) => Effect.map(users.findById(tenant.id, id), Option.map((u) => u.active))
        expect([yield* active(ann.id), yield* active(bob.id)]).toEqual([Option.some(true), Option.some(false)])
        yield* (yield* MemberRepository).remove(tenant.id, "sub-ann", t0)
        expect(yield* active(ann.id)).toEqual(Option.some(false))
        expect((yield* users.list(tenant.id, [], everyone)).users.map((u) => u.active)).toEqual([false, false])
      }))

    it.effect("reads the role of the linked member while it is active, whichever door changed it; the stored one otherwise", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const members = yield* MemberRepository
        const tenant = yield* storedTenant("scim-role")
        // Stored as viewer; the member joined otherwise, as architect (single sign-on's claims, say).
        yield* joined(tenant, "sub-ann", "ann@example.com", "architect")
        const ann = yield* stored(tenant, "ann@example.com", 0, { userSub: "sub-ann", arbRole: "viewer" })
        const role = Effect.map(users.findById(tenant.id, ann.id), Option.map((u) => u.arbRole))
        expect(yield* role).toEqual(Option.some("architect"))
        expect(Option.map(yield* users.lockById(tenant.id, ann.id), (u) => u.arbRole)).toEqual(Option.some("architect"))
        expect((yield* users.list(tenant.id, [], everyone)).users.map((u) => u.arbRole)).toEqual(["architect"])
        yield* members.changeRole(tenant.id, "sub-ann", "tenant-admin")
        expect(yield* role).toEqual(Option.some("tenant-admin"))
        // Removed: the stored role again, until the change is told, which keeps the member's last one.
        yield* members.remove(tenant.id, "sub-ann", t0)
        expect(yield* role).toEqual(Option.some("viewer"))
        yield* users.memberChanged(tenant.id, "sub-ann", null, t0)
        expect(Option.map(yield* users.findById(tenant.id, ann.id), (u) => [u.arbRole, u.active])).toEqual(Option.some(["tenant-admin", false]))
        // A User linked by adoption stores the member's role too.
        yield* joined(tenant, "sub-bob", "bob@example.com", "contributor")
        const bob = yield* stored(tenant, "bob@example.com", 1, { arbRole: "viewer" })
        yield* users.adoptMembers(tenant.id, t0)
        yield* members.remove(tenant.id, "sub-bob", t0)
        expect(Option.map(yield* users.findById(tenant.id, bob.id), (u) => [u.userSub, u.arbRole])).toEqual(Option.some(["sub-bob", "contributor"]))
      }))

    it.effect("lists oldest first then by id, filtered, from an offset, with the total of the filter", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const tenant = yield* storedTenant("scim-list")
        const other = yield* storedTenant("scim-list-other")
        const tied = [randomUUID(), randomUUID()].sort()
        const c = yield* stored(tenant, "c@example.com", 2)
        const b = yield* stored(tenant, "b@example.com", 1, { id: tied[1]!, externalId: "Ext-B" })
        const a = yield* stored(tenant, "a@example.com", 1, { id: tied[0]!, email: "Alpha@Example.com" })
        yield* stored(other, "a@example.com", 0)
        const gone = yield* stored(tenant, "gone@example.com", 0)
        yield* users.markDeleted(tenant.id, gone.id, t0)
        const list = (filter: Parameters<typeof users.list>[1], page = everyone) => users.list(tenant.id, filter, page)

        const all = yield* list([])
        expect([all.totalResults, ids(all.users)]).toEqual([3, [a.id, b.id, c.id]])
        expect(yield* list([], { offset: 1, limit: 1 })).toMatchObject({ totalResults: 3, users: [expect.objectContaining({ id: b.id })] })
        expect(yield* list([], { offset: 3, limit: 10 })).toEqual({ totalResults: 3, users: [] })
        expect(yield* list([], { offset: 0, limit: 0 })).toEqual({ totalResults: 3, users: [] })

        expect(ids((yield* list([{ attribute: "userName", value: "B@EXAMPLE.com" }])).users)).toEqual([b.id])
        expect(ids((yield* list([{ attribute: "emails.value", value: "alpha@example.COM" }])).users)).toEqual([a.id])
        expect(ids((yield* list([{ attribute: "externalId", value: "Ext-B" }])).users)).toEqual([b.id])
        expect((yield* list([{ attribute: "externalId", value: "ext-b" }])).totalResults).toBe(0)
        expect(ids((yield* list([{ attribute: "id", value: c.id }])).users)).toEqual([c.id])
        expect((yield* list([{ attribute: "id", value: "not-a-uuid" }])).totalResults).toBe(0)
        expect((yield* list([{ attribute: "id", value: c.id }, { attribute: "userName", value: "a@example.com" }])).totalResults).toBe(0)
        expect(yield* list([{ attribute: "userName", value: "gone@example.com" }])).toEqual({ totalResults: 0, users: [] })
      }))

    it.effect("adopts the active members without a User once; links a User without member to the member with its e-mail", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const tenant = yield* storedTenant("scim-adopt")
        yield* joined(tenant, "sub-ann", "Ann@Example.com", "tenant-admin", 0)
        yield* joined(tenant, "sub-bob", "bob@example.com", "viewer", 1)
        yield* joined(tenant, "sub-gone", "gone@example.com", "viewer", 2)
        yield* (yield* MemberRepository).remove(tenant.id, "sub-gone", t0)
        yield* joined(tenant, "sub-cid", "cid@example.com", "contributor", 3)
        const kept = yield* stored(tenant, "cid", 0, { email: "CID@example.com" })
        // A userName taken by another User leaves that member to be adopted later, by the tool's own User.
        yield* joined(tenant, "sub-dan", "dan@example.com", "viewer", 4)
        const squatter = yield* stored(tenant, "dan@example.com", 0, { email: "not-dan@example.com" })
        const at = DateTime.add(t0, { hours: 1 })

        yield* users.adoptMembers(tenant.id, at)
        const listed = (yield* users.list(tenant.id, [], everyone)).users
        const bySub = (sub: string) => listed.find((u) => u.userSub === sub)
        expect(bySub("sub-ann")).toMatchObject({ userName: "Ann@Example.com", email: "Ann@Example.com", arbRole: "tenant-admin", active: true, version: 1, invitationId: null, externalId: null })
        expect(bySub("sub-ann")!.createdAt).toEqual(at)
        expect(bySub("sub-bob")).toMatchObject({ userName: "bob@example.com", arbRole: "viewer", active: true })
        expect(bySub("sub-cid")).toMatchObject({ id: kept.id, userName: "cid", arbRole: "contributor", active: true, version: 2 })
        expect(bySub("sub-gone")).toBeUndefined()
        expect(bySub("sub-dan")).toBeUndefined()
        expect(listed.find((u) => u.id === squatter.id)).toMatchObject({ userSub: null, active: false })
        // Once: a second adoption makes, links and changes nothing.
        yield* users.adoptMembers(tenant.id, DateTime.add(at, { hours: 1 }))
        expect((yield* users.list(tenant.id, [], everyone)).users).toEqual(listed)
      }))

    it.effect("a member's change gives their User a new version; a member without one takes the User of the invitation they accepted", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("scim-member-changed")
        const invitationId = randomUUID()
        yield* invitations.insert({
          id: invitationId,
          kind: "invitation",
          tenantId: tenant.id,
          email: "ann@example.com",
          arbRole: "viewer",
          invitedByEmail: "SCIM provisioning",
          createdAt: t0,
          expiresAt: DateTime.addDuration(t0, InvitationLifetime),
          acceptedAt: null,
          revokedAt: null
        }, `hash-${invitationId}`)
        const ann = yield* stored(tenant, "ann@example.com", 0, { invitationId })
        const at = DateTime.add(t0, { minutes: 9 })
        yield* users.memberChanged(tenant.id, "sub-nobody", null, at)
        expect(Option.map(yield* users.findById(tenant.id, ann.id), (u) => u.version)).toEqual(Option.some(1))

        yield* joined(tenant, "sub-ann", "ann@example.com")
        yield* users.memberChanged(tenant.id, "sub-ann", invitationId, at)
        // Linked, the User takes the member's role (the invitation's when it was accepted; architect here).
        expect(yield* users.findById(tenant.id, ann.id)).toEqual(Option.some({ ...ann, userSub: "sub-ann", arbRole: "architect", version: 2, updatedAt: at, active: true }))
        yield* users.memberChanged(tenant.id, "sub-ann", null, at)
        expect(Option.map(yield* users.findById(tenant.id, ann.id), (u) => u.version)).toEqual(Option.some(3))
        // A member who has a User of their own keeps it: the invitation's User is left as it is.
        const cid = yield* stored(tenant, "cid@example.com", 0, { userSub: "sub-cid" })
        yield* users.memberChanged(tenant.id, "sub-cid", invitationId, at)
        expect(Option.map(yield* users.findById(tenant.id, cid.id), (u) => u.version)).toEqual(Option.some(2))
        expect(Option.map(yield* users.findById(tenant.id, ann.id), (u) => [u.userSub, u.version])).toEqual(Option.some(["sub-ann", 3]))
      }))

    it.effect("inside a unit of work, a locked User holds back a second locker until the work ends, which then reads the new version", () =>
      Effect.gen(function*() {
        const users = yield* ScimUserRepository
        const unitOfWork = yield* UnitOfWork
        const tenant = yield* storedTenant("scim-lock")
        const ann = yield* stored(tenant, "ann@example.com")
        const first = yield* openUnitOfWork(users.lockById(tenant.id, ann.id), users.update({ ...ann, displayName: "Ann", version: 2 }, 1))
        const second = yield* Effect.forkChild(unitOfWork.run(users.lockById(tenant.id, ann.id)))
        expect(yield* stillWaiting(second), "the second locker went past the lock").toBe(true)
        yield* first.finish
        expect(Option.map(yield* Fiber.join(second), (u) => [u.version, u.displayName])).toEqual(Option.some([2, "Ann"]))
      }))
  })
}
