import { expect, layer } from "@effect/vitest"
import type { Tenant } from "@portfolio/domain"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Result, Fiber, Option } from "effect"
import { randomUUID } from "node:crypto"
import { type InvitationKind, InvitationLifetime, type InvitationRecord } from "../../src/domain/InvitationRecord.js"
import { InvitationRepository } from "../../src/ports/InvitationRepository.js"
import { adaptersUnderTest, openUnitOfWork, stillWaiting, storedTenant, t0 } from "../support/AdaptersUnderTest.js"
import { tenantWithAdmin } from "../support/Fixtures.js"

const record = (tenant: Tenant, email: string, minutes = 0, id?: string, kind: InvitationKind = "invitation") =>
  Effect.gen(function*() {
    const createdAt = DateTime.add(t0, { minutes })
    const invitation: InvitationRecord = {
      id: id ?? (yield* newId),
      kind,
      tenantId: tenant.id,
      email,
      arbRole: "architect",
      invitedByEmail: `admin@${tenant.slug}.test`,
      createdAt,
      expiresAt: DateTime.addDuration(createdAt, InvitationLifetime),
      acceptedAt: null,
      revokedAt: null
    }
    return invitation
  })

/** Stores a new invitation under a token hash of its own; answers it and the hash. */
const stored = (tenant: Tenant, email: string, minutes = 0, id?: string, kind: InvitationKind = "invitation") =>
  Effect.gen(function*() {
    const invitation = yield* record(tenant, email, minutes, id, kind)
    const tokenHash = `hash-${invitation.id}`
    yield* Effect.flatMap(InvitationRepository, (invitations) => invitations.insert(invitation, tokenHash))
    return { invitation, tokenHash }
  })

/** Every invitation of the tenant, read `limit` at a time, each page after the last one's position. */
const pageByPage = (tenant: Tenant, limit: number) =>
  Effect.gen(function*() {
    const invitations = yield* InvitationRepository
    const all: Array<InvitationRecord> = []
    let after: Option.Option<{ createdAt: DateTime.Utc; id: string }> = Option.none()
    for (;;) {
      const page = yield* invitations.list(tenant.id, { after, limit })
      all.push(...page)
      const last = page.at(-1)
      if (page.length < limit || last === undefined) return all
      after = Option.some({ createdAt: last.createdAt, id: last.id })
    }
  })

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`InvitationRepository contract, ${adapters.name}`, (it) => {
    it.effect("pages the list newest first after a position, ties of time broken by id, from the first page on", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-pages")
        const other = yield* storedTenant("invitations-pages-other")
        for (let i = 0; i < 11; i++) yield* stored(tenant, `p${i}@example.com`, i % 4)
        yield* stored(other, "elsewhere@example.com", 1)
        const whole = yield* invitations.list(tenant.id)
        for (const limit of [1, 2, 3, 11, 12]) expect((yield* pageByPage(tenant, limit)).map((r) => r.id)).toEqual(whole.map((r) => r.id))
        expect(yield* invitations.list(tenant.id, { after: Option.none(), limit: 3 })).toEqual(whole.slice(0, 3))

        // Written since, newer than the position: not on the pages after it.
        const position = { createdAt: whole[4]!.createdAt, id: whole[4]!.id }
        yield* stored(tenant, "later@example.com", 10)
        expect(yield* invitations.list(tenant.id, { after: Option.some(position), limit: 100 })).toEqual(whole.slice(5))
      }))

    it.effect("keeps an invitation, found by id within its tenant and by its token hash", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-kept")
        const other = yield* storedTenant("invitations-other")
        const { invitation, tokenHash } = yield* stored(tenant, "Ann@Example.com")
        expect(yield* invitations.findById(tenant.id, invitation.id)).toEqual(Option.some(invitation))
        expect(yield* invitations.findById(other.id, invitation.id)).toEqual(Option.none())
        expect(yield* invitations.findByTokenHash(tokenHash)).toEqual(Option.some(invitation))
        expect(yield* invitations.findByTokenHash("hash-of-nothing")).toEqual(Option.none())
      }))

    it.effect("changes the role of an invitation of the tenant neither accepted nor revoked, and of no other", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-roles")
        const other = yield* storedTenant("invitations-roles-other")
        const { invitation } = yield* stored(tenant, "ann@example.com")
        // Another tenant names it in vain.
        expect(yield* invitations.changeRole(other.id, invitation.id, "tenant-admin")).toBe(false)
        expect(Option.map(yield* invitations.findById(tenant.id, invitation.id), (r) => r.arbRole)).toEqual(Option.some(invitation.arbRole))
        expect(yield* invitations.changeRole(tenant.id, invitation.id, "tenant-admin")).toBe(true)
        expect(yield* invitations.findById(tenant.id, invitation.id)).toEqual(Option.some({ ...invitation, arbRole: "tenant-admin" }))
        const revoked = (yield* stored(tenant, "bob@example.com")).invitation
        yield* invitations.markRevoked(revoked.id, t0)
        expect(yield* invitations.changeRole(tenant.id, revoked.id, "viewer")).toBe(false)
        const accepted = (yield* stored(tenant, "cid@example.com")).invitation
        yield* invitations.markAccepted(accepted.id, t0)
        expect(yield* invitations.changeRole(tenant.id, accepted.id, "viewer")).toBe(false)
        expect(Option.map(yield* invitations.findById(tenant.id, accepted.id), (r) => r.arbRole)).toEqual(Option.some("architect"))
        expect(yield* invitations.changeRole(tenant.id, randomUUID(), "viewer")).toBe(false)
      }))

    it.effect("the partial unique index alone refuses concurrent PENDING duplicates written straight to the repository", () =>
      Effect.gen(function*() {
        const { tenant } = yield* tenantWithAdmin("index")
        const invitations = yield* InvitationRepository
        const now = yield* DateTime.now
        const results = yield* Effect.all(
          Array.from({ length: 100 }, (_, i) =>
            Effect.result(invitations.insert({
              id: randomUUID(),
              kind: "invitation",
              tenantId: tenant.id,
              email: i % 3 === 0 ? "Bob@Example.com" : "bob@example.com",
              arbRole: "viewer",
              invitedByEmail: "admin@index.test",
              createdAt: now,
              expiresAt: DateTime.add(now, { days: 7 }),
              acceptedAt: null,
              revokedAt: null
            }, `hash-${i}-${randomUUID()}`))),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Result.isSuccess)).toHaveLength(1)
        expect(new Set(results.filter(Result.isFailure).map((r) => r.failure._tag))).toEqual(new Set(["PendingInvitationExists"]))
      }))

    it.effect("an e-mail's invitation blocks another until it expires, is revoked or is accepted", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-pending")
        const week = 7 * 24 * 60
        yield* stored(tenant, "jane@example.com")
        const blocked = yield* record(tenant, "JANE@example.com", week - 1)
        expect((yield* Effect.flip(invitations.insert(blocked, "hash-blocked")))._tag).toBe("PendingInvitationExists")
        const renewed = yield* stored(tenant, "JANE@example.com", week)
        const next = yield* record(tenant, "jane@example.com", week + 1)
        expect((yield* Effect.flip(invitations.insert(next, "hash-next")))._tag).toBe("PendingInvitationExists")
        expect(yield* invitations.markRevoked(renewed.invitation.id, DateTime.add(t0, { minutes: week }))).toBe(true)
        yield* invitations.insert(next, "hash-next")
        expect(yield* invitations.markAccepted(next.id, DateTime.add(t0, { minutes: week + 2 }))).toBe(true)
        yield* stored(tenant, "jane@example.com", week + 3)
      }))

    it.effect("lists the tenant's invitations newest first, ties broken by id, descending", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-list")
        const other = yield* storedTenant("invitations-list-other")
        const id = (n: number) => `00000000-0000-4000-8000-00000000a00${n}`
        const old = yield* stored(tenant, "old@example.com", 0, id(3))
        const a = yield* stored(tenant, "a@example.com", 10, id(2))
        const b = yield* stored(tenant, "b@example.com", 10, id(1))
        yield* stored(other, "elsewhere@example.com", 20)
        expect((yield* invitations.list(tenant.id)).map((r) => r.id)).toEqual([a, b, old].map((s) => s.invitation.id))
      }))

    it.effect("counts the tenant's invitations created after an instant, and names the oldest of them", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-count")
        const other = yield* storedTenant("invitations-count-other")
        for (const minutes of [0, 10, 20]) yield* stored(tenant, `p${minutes}@example.com`, minutes)
        yield* stored(other, "elsewhere@example.com", 15)
        expect(yield* invitations.countCreatedSince(tenant.id, t0)).toEqual({ count: 2, oldest: Option.some(DateTime.add(t0, { minutes: 10 })) })
        expect(yield* invitations.countCreatedSince(tenant.id, DateTime.add(t0, { minutes: 20 }))).toEqual({ count: 0, oldest: Option.none() })
      }))

    it.effect("keeps each invitation's kind, lists both kinds, and counts only those of kind invitation", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-kinds")
        const welcome = yield* stored(tenant, "first-admin@example.com", 5, undefined, "welcome")
        const invited = yield* stored(tenant, "invited@example.com", 10)
        expect(yield* invitations.findByTokenHash(welcome.tokenHash)).toEqual(Option.some(welcome.invitation))
        expect(yield* invitations.findById(tenant.id, invited.invitation.id)).toEqual(Option.some(invited.invitation))
        expect((yield* invitations.list(tenant.id)).map((r) => [r.email, r.kind])).toEqual([
          ["invited@example.com", "invitation"],
          ["first-admin@example.com", "welcome"]
        ])
        expect(yield* invitations.countCreatedSince(tenant.id, t0)).toEqual({ count: 1, oldest: Option.some(DateTime.add(t0, { minutes: 10 })) })
        // A welcome still holds its e-mail's one PENDING invitation.
        const again = yield* record(tenant, "FIRST-ADMIN@example.com", 20)
        expect((yield* Effect.flip(invitations.insert(again, "hash-again")))._tag).toBe("PendingInvitationExists")
      }))

    it.effect("closes an open invitation once: accepted or revoked, it stays as it is", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-close")
        const { invitation } = yield* stored(tenant, "closing@example.com")
        const at = DateTime.add(t0, { hours: 1 })
        expect(yield* invitations.markAccepted(invitation.id, at)).toBe(true)
        expect(yield* invitations.markAccepted(invitation.id, at)).toBe(false)
        expect(yield* invitations.markRevoked(invitation.id, at)).toBe(false)
        expect(yield* invitations.findById(tenant.id, invitation.id)).toEqual(Option.some({ ...invitation, acceptedAt: at }))
        expect(yield* invitations.markRevoked(yield* newId, at)).toBe(false)
      }))

    it.effect("counts the wrong passwords typed through an invitation's link, each kept once its unit of work commits", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const unitOfWork = yield* UnitOfWork
        const tenant = yield* storedTenant("invitations-wrong-passwords")
        const { invitation, tokenHash } = yield* stored(tenant, "guessed@example.com")
        const other = yield* stored(tenant, "other@example.com")
        expect(yield* invitations.recordWrongPassword(invitation.id)).toBe(1)
        // As the acceptance page does: counted under the link's lock, in work that then commits.
        expect(yield* unitOfWork.run(Effect.andThen(invitations.findByTokenHash(tokenHash), invitations.recordWrongPassword(invitation.id)))).toBe(2)
        // Work that fails takes its count back with it.
        yield* Effect.flip(unitOfWork.run(Effect.andThen(invitations.recordWrongPassword(invitation.id), Effect.fail("refused"))))
        expect(yield* invitations.recordWrongPassword(invitation.id)).toBe(3)
        expect(yield* invitations.recordWrongPassword(other.invitation.id)).toBe(1)
        expect(yield* invitations.recordWrongPassword(yield* newId)).toBe(0)
        // The count is no part of the invitation as it reads.
        expect(yield* invitations.findByTokenHash(tokenHash)).toEqual(Option.some(invitation))
      }))

    it.effect("tells whether an e-mail has a PENDING invitation at an instant, without waiting on a creation under way", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const tenant = yield* storedTenant("invitations-has-pending")
        const other = yield* storedTenant("invitations-has-pending-other")
        const week = 7 * 24 * 60
        const { invitation } = yield* stored(tenant, "jane@example.com")
        expect(yield* invitations.hasPending(tenant.id, "JANE@Example.com", DateTime.add(t0, { minutes: week - 1 }))).toBe(true)
        expect(yield* invitations.hasPending(tenant.id, "jane@example.com", DateTime.add(t0, { minutes: week })), "expired").toBe(false)
        expect(yield* invitations.hasPending(other.id, "jane@example.com", t0), "another tenant").toBe(false)
        expect(yield* invitations.hasPending(tenant.id, "john@example.com", t0), "another e-mail").toBe(false)
        // A creation under way holds the tenant's count until it ends; the read answers meanwhile
        // (bounded so that a read that waited fails here instead of hanging until the work ends).
        const creation = yield* openUnitOfWork(invitations.countCreatedSince(tenant.id, t0), Effect.void)
        const meanwhile = yield* invitations.hasPending(tenant.id, "jane@example.com", t0).pipe(
          Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(new Error("the read waited on the creation under way")) })
        )
        yield* creation.finish
        expect(meanwhile).toBe(true)
        expect(yield* invitations.markRevoked(invitation.id, t0)).toBe(true)
        expect(yield* invitations.hasPending(tenant.id, "jane@example.com", t0), "revoked").toBe(false)
      }))

    it.effect("inside a unit of work, counting holds back a concurrent count in the tenant until the work ends", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const unitOfWork = yield* UnitOfWork
        const tenant = yield* storedTenant("invitations-rate-lock")
        const creation = yield* openUnitOfWork(
          Effect.map(invitations.countCreatedSince(tenant.id, t0), (recent) => expect(recent.count).toBe(0)),
          stored(tenant, "first@example.com", 1)
        )
        const other = yield* Effect.forkChild(unitOfWork.run(invitations.countCreatedSince(tenant.id, t0)))
        expect(yield* stillWaiting(other), "the second count went past the lock").toBe(true)
        yield* creation.finish
        expect((yield* Fiber.join(other)).count).toBe(1)
      }))

    it.effect("inside a unit of work, finding by token hash holds the invitation until the work ends", () =>
      Effect.gen(function*() {
        const invitations = yield* InvitationRepository
        const unitOfWork = yield* UnitOfWork
        const tenant = yield* storedTenant("invitations-link-lock")
        const { invitation, tokenHash } = yield* stored(tenant, "once@example.com")
        const at = DateTime.add(t0, { hours: 1 })
        const acceptance = yield* openUnitOfWork(
          Effect.map(invitations.findByTokenHash(tokenHash), (found) => expect(Option.isSome(found)).toBe(true)),
          invitations.markAccepted(invitation.id, at)
        )
        const other = yield* Effect.forkChild(unitOfWork.run(invitations.findByTokenHash(tokenHash)))
        expect(yield* stillWaiting(other), "the second reader went past the lock").toBe(true)
        yield* acceptance.finish
        expect(yield* Fiber.join(other)).toEqual(Option.some({ ...invitation, acceptedAt: at }))
      }))
  })
}
