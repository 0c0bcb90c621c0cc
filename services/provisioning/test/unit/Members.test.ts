import { describe, expect, it } from "@effect/vitest"
import { Member, MemberRemoved } from "@portfolio/domain"
import { DateTime, Duration, Effect, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation, listInvitations } from "../../src/usecases/Invitations.js"
import { listMembers, removeMember } from "../../src/usecases/Members.js"
import { adminOf, invite, pageClient, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

const lastToken = Effect.gen(function*() {
  const state = yield* Ref.get(yield* MemoryStore)
  return tokenOf(state.mail.at(-1)!.text)
})

describe("listMembers", () => {
  it.effect("lists the active members of the caller's tenant, newest first", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const { admin, caller } = yield* tenantWithAdmin("acme")
      yield* tenantWithAdmin("globex")
      yield* TestClock.adjust(Duration.minutes(5))
      yield* createInvitation(caller, invite("jane@example.com", "contributor"))
      yield* acceptInvitation(yield* lastToken, Redacted.make("a long enough password"), pageClient)
      const members = yield* listMembers(caller)
      expect(members).toHaveLength(2)
      expect(members[0]).toEqual(
        new Member({
          userSub: members[0]!.userSub,
          userEmail: "jane@example.com",
          arbRole: "contributor",
          source: "INVITATION",
          grantedAt: DateTime.makeUnsafe("2026-07-01T09:05:00.000Z")
        })
      )
      expect(members[1]).toEqual(admin)
      const denied = yield* Effect.flip(listMembers(adminOf(caller.tenantId, admin.userSub, "read", "arb-member")))
      expect(denied.detail).toBe("role 'arb-member' does not allow GET /tenant/invitations/members, which requires the tenant-admin role")
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("removeMember", () => {
  it.effect("removes the member, keeps the row, and records member.removed in the same unit of work", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const { admin, caller, tenant } = yield* tenantWithAdmin("acme")
      yield* createInvitation(caller, invite("jane@example.com"))
      const jane = yield* acceptInvitation(yield* lastToken, Redacted.make("a long enough password"), pageClient)
      yield* TestClock.adjust(Duration.minutes(1))
      yield* removeMember(caller, jane.userSub)
      expect(yield* listMembers(caller)).toEqual([admin])
      const state = yield* Ref.get(yield* MemoryStore)
      expect(state.members.find((m) => m.member.userSub === jane.userSub)?.removedAt).toEqual(DateTime.makeUnsafe("2026-07-01T09:01:00.000Z"))
      expect(state.outbox).toEqual([
        MemberRemoved.make({
          id: state.outbox[0]!.id,
          type: "member.removed",
          occurredAt: DateTime.makeUnsafe("2026-07-01T09:01:00.000Z"),
          tenantId: tenant.id,
          userSub: jane.userSub
        })
      ])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("answers the same NOT_FOUND for an unknown userSub, another tenant's member and an already removed one", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("acme")
      const other = yield* tenantWithAdmin("globex")
      const unknown = yield* Effect.flip(removeMember(caller, "no-such-user"))
      const foreign = yield* Effect.flip(removeMember(caller, other.admin.userSub))
      expect(unknown).toMatchObject({ _tag: "NotFound", errorCode: "NOT_FOUND", detail: "No member with this userSub in the tenant." })
      expect(foreign).toEqual(unknown)
      expect(yield* listMembers(other.caller)).toEqual([other.admin])
      yield* createInvitation(caller, invite("jane@example.com"))
      const jane = yield* acceptInvitation(yield* lastToken, Redacted.make("a long enough password"), pageClient)
      yield* removeMember(caller, jane.userSub)
      expect(yield* Effect.flip(removeMember(caller, jane.userSub))).toEqual(unknown)
      expect((yield* Ref.get(yield* MemoryStore)).outbox).toHaveLength(1)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("lets a removed person be invited again and come back with the same userSub", () =>
    Effect.gen(function*() {
      const { caller, welcome } = yield* tenantWithAdmin("acme")
      yield* createInvitation(caller, invite("jane@example.com"))
      const first = yield* acceptInvitation(yield* lastToken, Redacted.make("a long enough password"), pageClient)
      yield* removeMember(caller, first.userSub)
      const again = yield* createInvitation(caller, invite("Jane@Example.com", "viewer"))
      expect(again.status).toBe("PENDING")
      // The global account kept its password: coming back, they type it rather than choose another.
      const back = yield* acceptInvitation(yield* lastToken, Redacted.make("a long enough password"), pageClient)
      expect(back.userSub).toBe(first.userSub)
      expect(back.arbRole).toBe("viewer")
      // Besides the admin's own welcome link, still PENDING.
      const jane = (yield* listInvitations(caller)).filter((i) => i.id !== welcome?.invitationId)
      expect(jane.map((i) => i.status)).toEqual(["ACCEPTED", "ACCEPTED"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("requires the write scope and the tenant-admin role, and then removes nothing", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant } = yield* tenantWithAdmin("acme")
      const read = yield* Effect.flip(removeMember(adminOf(tenant.id, admin.userSub, "read"), admin.userSub))
      expect(read.detail).toBe("token scope 'read' does not allow DELETE /tenant/invitations/members/{userSub}, which requires 'write'")
      const architect = yield* Effect.flip(removeMember(adminOf(tenant.id, admin.userSub, "write", "architect"), admin.userSub))
      expect(architect._tag).toBe("InsufficientScope")
      expect(yield* listMembers(caller)).toEqual([admin])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("refuses to remove the tenant's last active tenant-admin with LAST_TENANT_ADMIN, and changes nothing", () =>
    Effect.gen(function*() {
      const { admin, caller } = yield* tenantWithAdmin("acme")
      yield* createInvitation(caller, invite("jane@example.com", "architect"))
      const jane = yield* acceptInvitation(yield* lastToken, Redacted.make("a long enough password"), pageClient)
      const refused = yield* Effect.flip(removeMember(caller, admin.userSub))
      expect(refused).toMatchObject({
        _tag: "LastTenantAdmin",
        errorCode: "LAST_TENANT_ADMIN",
        detail: "This member is the tenant's last tenant-admin, and the tenant must keep one tenant-admin: invite another tenant-admin first."
      })
      expect(yield* listMembers(caller)).toEqual([jane, admin])
      expect((yield* Ref.get(yield* MemoryStore)).outbox).toEqual([])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("lets a tenant-admin remove another tenant-admin, or themselves, while another one remains", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant } = yield* tenantWithAdmin("acme")
      const inviteAdmin = (email: string) =>
        Effect.andThen(createInvitation(caller, invite(email, "tenant-admin")), Effect.flatMap(lastToken, (token) => acceptInvitation(token, Redacted.make("a long enough password"), pageClient)))
      const second = yield* inviteAdmin("second@example.com")
      const third = yield* inviteAdmin("third@example.com")
      yield* removeMember(caller, second.userSub)
      yield* removeMember(caller, admin.userSub)
      const thirdCaller = adminOf(tenant.id, third.userSub)
      expect(yield* listMembers(thirdCaller)).toEqual([third])
      expect((yield* Effect.flip(removeMember(thirdCaller, third.userSub)))._tag).toBe("LastTenantAdmin")
      expect((yield* Ref.get(yield* MemoryStore)).outbox.map((e) => e.userSub)).toEqual([second.userSub, admin.userSub])
    }).pipe(Effect.provide(MemoryLayer())))
})
