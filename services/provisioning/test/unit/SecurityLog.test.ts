import { describe, expect, it } from "@effect/vitest"
import { CreateTenantRequest } from "@portfolio/domain"
import { DateTime, Effect, Ref } from "effect"
import { TestClock } from "effect/testing"
import { createInvitation, revokeInvitation } from "../../src/usecases/Invitations.js"
import { removeMember } from "../../src/usecases/Members.js"
import { createTenant, provisionSsoMember, resendWelcome } from "../../src/usecases/Tenants.js"
import { adminOf, apiOrigin, invite, tenantWithAdmin } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

const start = DateTime.makeUnsafe("2026-07-01T09:00:00.000Z")
const atStart = TestClock.setTime(DateTime.toEpochMillis(start))

/** Where the operator's admin call came from, as the admin port's socket tells it. */
const operatorOrigin = { ip: "10.0.0.5", userAgent: "portfolio-cli" }

const store = Effect.flatMap(MemoryStore, Ref.get)
const logged = Effect.map(store, (state) => state.securityEvents)
const setFault = (fault: "mailerDown", on: boolean) => Effect.flatMap(MemoryStore, (ref) => Ref.update(ref, (s) => ({ ...s, [fault]: on })))

/** An entry the tenant's admin (Boss@Acme.test) made through the public API, from `apiOrigin`, `afterMs` after the start. */
const byAdminOverApi = (tenantId: string, actorSub: string, action: string, target: string, detail: object, afterMs = 0) => ({
  id: expect.any(String),
  tenantId,
  at: DateTime.addDuration(start, afterMs),
  actorSub,
  actorEmail: "Boss@Acme.test",
  action,
  target,
  ip: "198.51.100.23",
  userAgent: "curl/8.7.1",
  detail
})

/** The entry of a welcome link the operator made on the admin port, from `operatorOrigin`. */
const operatorWelcome = (tenantId: string, invitationId: string, email: string) => ({
  id: expect.any(String),
  tenantId,
  at: start,
  actorSub: "operator:alice",
  actorEmail: "",
  action: "member_invited",
  target: invitationId,
  ip: "10.0.0.5",
  userAgent: "portfolio-cli",
  detail: { email, role: "tenant-admin", kind: "welcome" }
})

/** A tenant whose admin's welcome went unrecorded (the fixture's door gives no origin), with a viewer. */
const setUp = Effect.gen(function*() {
  yield* atStart
  const { admin, caller, tenant } = yield* tenantWithAdmin("acme", "Boss@Acme.test")
  const { member: viewer } = yield* provisionSsoMember({ slug: "acme", userSub: "sso|viewer", email: "Vic@Acme.test", arbRole: "viewer" })
  expect(yield* logged).toEqual([])
  return { admin, caller, tenant, viewer }
})

describe("the public API's door", () => {
  it.effect("createInvitation with an origin records member_invited: the caller, the invitation, the e-mail and role, the origin", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant } = yield* setUp
      const invitation = yield* createInvitation(caller, invite(" Jane@Example.com ", "architect"), apiOrigin)
      expect(yield* logged).toEqual([byAdminOverApi(tenant.id, admin.userSub, "member_invited", invitation.id, { email: "Jane@Example.com", role: "architect", kind: "invitation" })])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("a refused or failed invitation records nothing: 400, 409, 429, and a mail that cannot be sent", () =>
    Effect.gen(function*() {
      const { caller } = yield* setUp
      const refusals = [
        createInvitation(caller, invite("not-an-e-mail"), apiOrigin),
        createInvitation(caller, invite("vic@acme.test"), apiOrigin),
        createInvitation(caller, invite("jane@example.com", "owner"), apiOrigin)
      ]
      for (const refusal of refusals) expect((yield* Effect.flip(refusal))._tag).toBe("InvalidInvitationParam")
      yield* setFault("mailerDown", true)
      expect((yield* Effect.flip(createInvitation(caller, invite("jane@example.com"), apiOrigin)))._tag).toBe("Unavailable")
      yield* setFault("mailerDown", false)
      yield* createInvitation(caller, invite("jane@example.com"), apiOrigin)
      expect((yield* Effect.flip(createInvitation(caller, invite("JANE@example.com"), apiOrigin)))._tag).toBe("AlreadyInvited")
      // The hour's second invitation, through the console's door.
      yield* createInvitation(caller, invite("ann@example.com"))
      expect((yield* Effect.flip(createInvitation(caller, invite("max@example.com"), apiOrigin)))._tag).toBe("RateLimited")
      expect((yield* logged).map((e) => [e.action, e.detail["email"]])).toEqual([["member_invited", "jane@example.com"]])
      expect((yield* store).invitations.map((row) => row.record.email)).toEqual(["Boss@Acme.test", "jane@example.com", "ann@example.com"])
    }).pipe(Effect.provide(MemoryLayer({ invitationsPerTenantPerHour: 2 }))))

  it.effect("revokeInvitation with an origin records invitation_revoked once; a 404 or a 409 records nothing", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant } = yield* setUp
      const invitation = yield* createInvitation(caller, invite("Jane@Example.com"))
      yield* TestClock.adjust("1 minute")
      yield* revokeInvitation(caller, invitation.id, apiOrigin)
      expect((yield* Effect.flip(revokeInvitation(caller, invitation.id, apiOrigin)))._tag).toBe("InvitationNotPending")
      for (const unknown of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
        expect((yield* Effect.flip(revokeInvitation(caller, unknown, apiOrigin)))._tag).toBe("NotFound")
      }
      expect(yield* logged).toEqual([byAdminOverApi(tenant.id, admin.userSub, "invitation_revoked", invitation.id, { email: "Jane@Example.com" }, 60_000)])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("removeMember with an origin records member_removed with the member's e-mail; the last admin and a 404 record nothing", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant, viewer } = yield* setUp
      expect((yield* Effect.flip(removeMember(caller, admin.userSub, apiOrigin)))._tag).toBe("LastTenantAdmin")
      yield* removeMember(caller, viewer.userSub, apiOrigin)
      expect((yield* Effect.flip(removeMember(caller, viewer.userSub, apiOrigin)))._tag).toBe("NotFound")
      expect(yield* logged).toEqual([byAdminOverApi(tenant.id, admin.userSub, "member_removed", "sso|viewer", { email: "Vic@Acme.test" })])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("without an origin (the console's door) the same three actions record nothing, and act as before", () =>
    Effect.gen(function*() {
      const { caller, viewer } = yield* setUp
      const invitation = yield* createInvitation(caller, invite("jane@example.com"))
      yield* revokeInvitation(caller, invitation.id)
      yield* removeMember(caller, viewer.userSub)
      const state = yield* store
      expect(state.invitations.find((row) => row.record.id === invitation.id)?.record.revokedAt).toEqual(start)
      expect(state.outbox.map((event) => event.userSub)).toEqual(["sso|viewer"])
      expect(state.securityEvents).toEqual([])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("a caller who is not a tenant-admin records nothing", () =>
    Effect.gen(function*() {
      const { tenant, viewer } = yield* setUp
      const claimed = adminOf(tenant.id, viewer.userSub)
      expect((yield* Effect.flip(createInvitation(claimed, invite("jane@example.com"), apiOrigin)))._tag).toBe("InsufficientScope")
      expect((yield* Effect.flip(removeMember(claimed, viewer.userSub, apiOrigin)))._tag).toBe("InsufficientScope")
      expect(yield* logged).toEqual([])
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("the operator's door", () => {
  it.effect("createTenant with an origin records the welcome as member_invited, by the operator, who has no e-mail", () =>
    Effect.gen(function*() {
      yield* atStart
      const { tenant, welcome } = yield* createTenant(new CreateTenantRequest({ slug: "acme", adminEmail: "Boss@Acme.test" }), "operator:alice", operatorOrigin)
      expect(yield* logged).toEqual([operatorWelcome(tenant.id, welcome!.invitationId, "Boss@Acme.test")])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("no welcome, no entry: an admin whose account has a password, a taken slug, a mail that cannot be sent", () =>
    Effect.gen(function*() {
      yield* createTenant(new CreateTenantRequest({ slug: "first", adminEmail: "boss@acme.test" }), "operator:alice")
      yield* Effect.flatMap(MemoryStore, (ref) =>
        Ref.update(ref, (s) => ({ ...s, accounts: s.accounts.map((a) => ({ ...a, password: "a long enough password" })) })))
      const { welcome } = yield* createTenant(new CreateTenantRequest({ slug: "second", adminEmail: "boss@acme.test" }), "operator:alice", operatorOrigin)
      expect(welcome).toBeNull()
      expect((yield* Effect.flip(createTenant(new CreateTenantRequest({ slug: "second", adminEmail: "x@acme.test" }), "operator:alice", operatorOrigin)))._tag)
        .toBe("Conflict")
      yield* setFault("mailerDown", true)
      expect((yield* Effect.flip(createTenant(new CreateTenantRequest({ slug: "third", adminEmail: "new@acme.test" }), "operator:alice", operatorOrigin)))._tag)
        .toBe("Unavailable")
      const state = yield* store
      expect(state.tenants.map((t) => t.slug)).toEqual(["first", "second"])
      expect(state.securityEvents).toEqual([])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("resendWelcome with an origin records the new link; a refused or failed resend records nothing", () =>
    Effect.gen(function*() {
      const { tenant } = yield* setUp
      expect((yield* Effect.flip(resendWelcome("acme", "vic@acme.test", "operator:alice", operatorOrigin)))._tag).toBe("Conflict")
      expect((yield* Effect.flip(resendWelcome("acme", "nobody@acme.test", "operator:alice", operatorOrigin)))._tag).toBe("NotFound")
      yield* setFault("mailerDown", true)
      expect((yield* Effect.flip(resendWelcome("acme", "boss@acme.test", "operator:alice", operatorOrigin)))._tag).toBe("Unavailable")
      yield* setFault("mailerDown", false)
      const welcome = yield* resendWelcome("acme", "boss@acme.test", "operator:alice", operatorOrigin)
      expect(yield* logged).toEqual([operatorWelcome(tenant.id, welcome.invitationId, "boss@acme.test")])
    }).pipe(Effect.provide(MemoryLayer())))
})
