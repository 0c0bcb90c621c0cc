import { expect, layer } from "@effect/vitest"
import { type ArbRole, Member } from "@portfolio/domain"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Fiber, Option } from "effect"
import { MemberRepository } from "../../src/ports/MemberRepository.js"
import { adaptersUnderTest, openUnitOfWork, stillWaiting, storedTenant, t0 } from "../support/AdaptersUnderTest.js"
import { tenantWithAdmin } from "../support/Fixtures.js"

const member = (userSub: string, userEmail: string, arbRole: ArbRole = "viewer", minutes = 0) =>
  new Member({ userSub, userEmail, arbRole, source: "INVITATION", grantedAt: DateTime.add(t0, { minutes }) })

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`MemberRepository contract, ${adapters.name}`, (it) => {
    it.effect("keeps active members, found by userSub and by e-mail in any case, listed most recently granted first", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const tenant = yield* storedTenant("members-kept")
        const other = yield* storedTenant("members-other")
        const ann = member("sub-ann", "Ann@Example.com", "architect", 0)
        const bob = member("sub-bob", "bob@example.com", "viewer", 5)
        const tie = member("sub-tie", "tie@example.com", "viewer", 5)
        for (const m of [ann, bob, tie]) yield* members.insert({ tenantId: tenant.id, member: m })
        yield* members.insert({ tenantId: other.id, member: member("sub-ann", "ann@example.com") })
        expect(yield* members.findActiveBySub(tenant.id, "sub-ann")).toEqual(Option.some(ann))
        expect(yield* members.findActiveByEmail(tenant.id, "ANN@example.COM")).toEqual(Option.some(ann))
        expect(yield* members.findActiveBySub(tenant.id, "sub-nobody")).toEqual(Option.none())
        expect(yield* members.listActive(tenant.id)).toEqual([tie, bob, ann])
      }))

    it.effect("pages active members after a position: ties in write order, a removal or a newer grant shifting nothing", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const tenant = yield* storedTenant("members-pages")
        const written = Array.from({ length: 9 }, (_, i) => member(`sub-${i}`, `m${i}@example.com`, "viewer", i % 3))
        for (const m of written) yield* members.insert({ tenantId: tenant.id, member: m })
        const whole = yield* members.listActive(tenant.id)
        const after = (m: Member) => Option.some({ grantedAt: m.grantedAt, userSub: m.userSub })
        for (const limit of [1, 2, 4]) {
          const paged: Array<Member> = []
          let position: Option.Option<{ grantedAt: DateTime.Utc; userSub: string }> = Option.none()
          for (;;) {
            const page = yield* members.listActive(tenant.id, { after: position, limit })
            paged.push(...page)
            if (page.length < limit) break
            position = after(page.at(-1)!)
          }
          expect(paged).toEqual(whole)
        }
        // The position's own member removed, and one granted since: the rest of the list as it was.
        yield* members.remove(tenant.id, whole[3]!.userSub, t0)
        yield* members.insert({ tenantId: tenant.id, member: member("sub-new", "new@example.com", "viewer", 30) })
        expect(yield* members.listActive(tenant.id, { after: after(whole[3]!), limit: 100 })).toEqual(whole.slice(4))
      }))

    it.effect("a unique e-mail among active members: case-insensitive, freed by removal", () =>
      Effect.gen(function*() {
        const { tenant } = yield* tenantWithAdmin("unique")
        const members = yield* MemberRepository
        const now = yield* DateTime.now
        const member = (userSub: string, userEmail: string) =>
          ({ tenantId: tenant.id, member: new Member({ userSub, userEmail, arbRole: "viewer", source: "SSO_JIT", grantedAt: now }) })
        yield* members.insert(member("s1", "Dup@Example.com"))
        expect((yield* Effect.flip(members.insert(member("s2", "dup@example.COM"))))._tag).toBe("MemberExists")
        expect(yield* members.remove(tenant.id, "s1", now)).toBe(true)
        yield* members.insert(member("s2", "dup@example.com"))
        expect(Option.map(yield* members.findActiveByEmail(tenant.id, "DUP@example.com"), (m) => m.userSub)).toEqual(Option.some("s2"))
      }))

    it.effect("refuses a second active membership of one userSub, and takes it back once the first is removed", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const tenant = yield* storedTenant("members-sub")
        yield* members.insert({ tenantId: tenant.id, member: member("sub-1", "first@example.com") })
        const again = { tenantId: tenant.id, member: member("sub-1", "second@example.com") }
        expect((yield* Effect.flip(members.insert(again)))._tag).toBe("MemberExists")
        yield* members.remove(tenant.id, "sub-1", t0)
        yield* members.insert(again)
        expect(yield* members.findActiveBySub(tenant.id, "sub-1")).toEqual(Option.some(again.member))
      }))

    it.effect("a refused insert leaves the enclosing unit of work usable: the read that settles a race, and the commit", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const unitOfWork = yield* UnitOfWork
        const tenant = yield* storedTenant("members-race")
        // The person signed in by single sign-on a moment before: their membership is there first.
        const first = member("sub-race", "race@example.com", "architect")
        yield* members.insert({ tenantId: tenant.id, member: first })
        const settled = yield* unitOfWork.run(Effect.gen(function*() {
          const refused = yield* Effect.flip(members.insert({ tenantId: tenant.id, member: member("sub-race", "race@example.com", "viewer") }))
          const byEmail = yield* Effect.flip(members.insert({ tenantId: tenant.id, member: member("sub-other", "RACE@example.com", "viewer") }))
          // The same transaction reads on, and writes on.
          const found = yield* members.findActiveBySub(tenant.id, "sub-race")
          yield* members.insert({ tenantId: tenant.id, member: member("sub-next", "next@example.com") })
          return { refused: refused._tag, byEmail: byEmail._tag, found }
        }))
        expect(settled).toEqual({ refused: "MemberExists", byEmail: "MemberExists", found: Option.some(first) })
        expect(Option.isSome(yield* members.findActiveBySub(tenant.id, "sub-next"))).toBe(true)
      }))

    it.effect("removes an active membership once; the removed one is read no more, but remembered as removed", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const tenant = yield* storedTenant("members-removal")
        const leaver = member("sub-leaver", "leaver@example.com")
        yield* members.insert({ tenantId: tenant.id, member: leaver })
        expect(yield* members.hasRemovedMembership(tenant.id, "sub-leaver")).toBe(false)
        expect(yield* members.remove(tenant.id, "sub-leaver", t0)).toBe(true)
        expect(yield* members.remove(tenant.id, "sub-leaver", t0)).toBe(false)
        expect(yield* members.remove(tenant.id, "sub-nobody", t0)).toBe(false)
        expect(yield* members.findActiveBySub(tenant.id, "sub-leaver")).toEqual(Option.none())
        expect(yield* members.findActiveByEmail(tenant.id, "leaver@example.com")).toEqual(Option.none())
        expect(yield* members.listActive(tenant.id)).toEqual([])
        expect(yield* members.hasRemovedMembership(tenant.id, "sub-leaver")).toBe(true)
        expect(yield* members.hasRemovedMembership(tenant.id, "sub-nobody")).toBe(false)
      }))

    it.effect("lists a userSub's active memberships in every tenant in the order written, removed ones and other people left out", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const [one, two, three] = [yield* storedTenant("by-sub-one"), yield* storedTenant("by-sub-two"), yield* storedTenant("by-sub-three")]
        const inTwo = member("sub-many", "Many@Example.com", "architect", 1)
        const inOne = member("sub-many", "many@example.com", "tenant-admin", 2)
        yield* members.insert({ tenantId: two.id, member: inTwo })
        yield* members.insert({ tenantId: three.id, member: member("sub-many", "many@example.com", "viewer", 3) })
        yield* members.insert({ tenantId: one.id, member: inOne })
        yield* members.insert({ tenantId: one.id, member: member("sub-other", "other@example.com") })
        yield* members.remove(three.id, "sub-many", t0)
        expect(yield* members.listActiveByUserSub("sub-many")).toEqual([{ tenantId: two.id, member: inTwo }, { tenantId: one.id, member: inOne }])
        expect(yield* members.listActiveByUserSub("sub-nobody")).toEqual([])
        // Back in the tenant it was removed from: the new membership, not the old one.
        const back = member("sub-many", "many@example.com", "contributor", 4)
        yield* members.insert({ tenantId: three.id, member: back })
        expect((yield* members.listActiveByUserSub("sub-many")).at(-1)).toEqual({ tenantId: three.id, member: back })
        expect(yield* members.listActiveByUserSub("sub-many")).toHaveLength(3)
      }))

    it.effect("changes an active member's role, which every read then gives; a removed or unknown member's is not changed", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const tenant = yield* storedTenant("members-roles")
        const other = yield* storedTenant("members-roles-other")
        const ann = member("sub-ann", "ann@example.com", "viewer")
        yield* members.insert({ tenantId: tenant.id, member: ann })
        yield* members.insert({ tenantId: other.id, member: ann })
        expect(yield* members.changeRole(tenant.id, "sub-ann", "tenant-admin")).toBe(true)
        const promoted = new Member({ ...ann, arbRole: "tenant-admin" })
        expect(yield* members.findActiveBySub(tenant.id, "sub-ann")).toEqual(Option.some(promoted))
        expect(yield* members.findActiveByEmail(tenant.id, "ann@example.com")).toEqual(Option.some(promoted))
        expect(yield* members.lockActiveAdmins(tenant.id)).toEqual(["sub-ann"])
        // Another tenant's membership of the same person keeps its role.
        expect(yield* members.findActiveBySub(other.id, "sub-ann")).toEqual(Option.some(ann))
        expect(yield* members.changeRole(tenant.id, "sub-nobody", "viewer")).toBe(false)
        yield* members.remove(tenant.id, "sub-ann", t0)
        expect(yield* members.changeRole(tenant.id, "sub-ann", "viewer")).toBe(false)
        expect(yield* members.hasRemovedMembership(tenant.id, "sub-ann")).toBe(true)
      }))

    it.effect("lists the active tenant-admins in the order they joined", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const tenant = yield* storedTenant("members-admins")
        for (const [sub, role] of [["a1", "tenant-admin"], ["v1", "viewer"], ["a2", "tenant-admin"], ["a3", "tenant-admin"]] as const) {
          yield* members.insert({ tenantId: tenant.id, member: member(sub, `${sub}@example.com`, role) })
        }
        yield* members.remove(tenant.id, "a2", t0)
        expect(yield* members.lockActiveAdmins(tenant.id)).toEqual(["a1", "a3"])
      }))

    it.effect("inside a unit of work, the admins stay locked until it ends: a concurrent reader then sees its outcome", () =>
      Effect.gen(function*() {
        const members = yield* MemberRepository
        const unitOfWork = yield* UnitOfWork
        const tenant = yield* storedTenant("members-lock")
        for (const sub of ["first", "second"]) {
          yield* members.insert({ tenantId: tenant.id, member: member(sub, `${sub}@example.com`, "tenant-admin") })
        }
        const removal = yield* openUnitOfWork(
          Effect.map(members.lockActiveAdmins(tenant.id), (admins) => expect(admins).toEqual(["first", "second"])),
          members.remove(tenant.id, "second", t0)
        )
        const other = yield* Effect.forkChild(unitOfWork.run(members.lockActiveAdmins(tenant.id)))
        expect(yield* stillWaiting(other), "the second reader went past the lock").toBe(true)
        yield* removal.finish
        expect(yield* Fiber.join(other)).toEqual(["first"])
      }))
  })
}
