import { describe, expect, it } from "@effect/vitest"
import { CreateTenantRequest, Member, Tenant, TenantMember } from "@portfolio/domain"
import { DateTime, Effect, Redacted, Ref, TestClock } from "effect"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation } from "../../src/usecases/Invitations.js"
import { removeMember } from "../../src/usecases/Members.js"
import { createTenant, findMember, getTenant } from "../../src/usecases/Tenants.js"
import { adminOf, invite, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

describe("tenants", () => {
  it.effect("createTenant makes the tenant and its first member, tenant-admin with source SIGNUP", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const at = DateTime.unsafeMake("2026-07-01T09:00:00.000Z")
      const created = yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "Boss@Acme.test" }))
      expect(created.tenant).toEqual(new Tenant({ id: created.tenant.id, slug: "acme", createdAt: at }))
      expect(created.admin).toEqual(
        new Member({ userSub: created.admin.userSub, userEmail: "Boss@Acme.test", arbRole: "tenant-admin", source: "SIGNUP", grantedAt: at })
      )
      expect(created.admin.userSub).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(yield* getTenant("acme")).toEqual(created.tenant)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("createTenant refuses an existing slug with Conflict and changes nothing", () =>
    Effect.gen(function*() {
      yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "boss@acme.test" }))
      const again = yield* Effect.flip(createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "other@acme.test" })))
      expect(again).toMatchObject({ _tag: "Conflict", errorCode: "CONFLICT", detail: "A tenant with the slug 'acme' already exists." })
      const state = yield* Ref.get(yield* MemoryStore)
      expect(state.members.map((m) => m.member.userEmail)).toEqual(["boss@acme.test"])
      expect(state.accounts.map((a) => a.email)).toEqual(["boss@acme.test"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("createTenant answers UNAVAILABLE when the identity provider is down, and creates nothing", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore
      yield* Ref.update(store, (s) => ({ ...s, identityDown: true }))
      const refused = yield* Effect.flip(createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "boss@acme.test" })))
      expect(refused).toMatchObject({ _tag: "Unavailable", errorCode: "UNAVAILABLE" })
      const state = yield* Ref.get(store)
      expect({ tenants: state.tenants, members: state.members }).toEqual({ tenants: [], members: [] })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("getTenant and findMember answer NotFound for what does not exist", () =>
    Effect.gen(function*() {
      expect(yield* Effect.flip(getTenant("nope"))).toMatchObject({ _tag: "NotFound", detail: "No tenant with the slug 'nope'." })
      yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "boss@acme.test" }))
      expect(yield* Effect.flip(findMember("acme", "jane@example.com"))).toMatchObject({
        _tag: "NotFound",
        detail: "No active member with this e-mail in 'acme'."
      })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("findMember finds an active member case-insensitively, and no longer once removed", () =>
    Effect.gen(function*() {
      const { admin, tenant } = yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "Boss@Acme.test" }))
      expect(yield* findMember("acme", "boss@ACME.test")).toEqual(new TenantMember({ tenant, member: admin }))
      const caller = adminOf(tenant.id, admin.userSub)
      yield* createInvitation(caller, invite("jane@example.com"))
      const token = tokenOf((yield* Ref.get(yield* MemoryStore)).mail[0]!.text)
      const jane = yield* acceptInvitation(token, Redacted.make("a long enough password"))
      expect((yield* findMember("acme", "JANE@example.com")).member).toEqual(jane)
      yield* removeMember(caller, jane.userSub)
      expect((yield* Effect.flip(findMember("acme", "jane@example.com")))._tag).toBe("NotFound")
    }).pipe(Effect.provide(MemoryLayer())))
})
