import { describe, expect, layer } from "@effect/vitest"
import { PatRequest, PatRequestDecider } from "@portfolio/domain"
import { Effect, type Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { requestExpiry } from "../../src/domain/PatRequestRules.js"
import { PatRequestRepository } from "../../src/ports/PatRequestRepository.js"
import { PatRepository } from "../../src/ports/PatRepository.js"
import { PatRequestRepositoryMemory } from "../support/PatRequestRepositoryMemory.js"
import { at, GatewayStoresPgFresh, newRecord } from "../support/PatRepositories.js"

/** The same cases against the production adapter and the test double the use case tests rely on. */
const adapters: ReadonlyArray<{ readonly name: string; readonly store: Layer.Layer<PatRequestRepository, unknown> }> = [
  { name: "PatRequestRepositoryPg (fresh database)", store: GatewayStoresPgFresh("it_gw_req") },
  { name: "PatRequestRepositoryMemory (test double)", store: PatRequestRepositoryMemory.layer }
]

const operator = new PatRequestDecider({ userSub: "operator:ops", email: null, role: "operator" })
const admin = new PatRequestDecider({ userSub: "auth0|admin", email: "admin@example.com", role: "tenant-admin" })

const newRequest = (overrides: Partial<ConstructorParameters<typeof PatRequest>[0]> = {}) => {
  const createdAt = overrides.createdAt ?? at("2026-07-01T10:00:00.000Z")
  return new PatRequest({
    id: randomUUID(),
    tenantId: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
    userSub: "auth0|dev",
    email: "dev@example.com",
    role: "architect",
    scope: "write",
    days: 30,
    justification: "Nightly export of the application list to the CMDB.",
    status: "pending",
    createdAt,
    expiresAt: requestExpiry(createdAt),
    decidedAt: null,
    decidedBy: null,
    reason: null,
    patId: null,
    ...overrides
  })
}

describe.each(adapters)("PatRequestRepository contract: $name", ({ store: storeLayer }) => {
  layer(storeLayer, { timeout: 60_000 })((it) => {
    it.effect("finds a request by its id, and nothing for an unknown id", () =>
      Effect.gen(function*() {
        const store = yield* PatRequestRepository
        const request = newRequest()
        yield* store.insert(request)
        expect(Option.getOrThrow(yield* store.find(request.id))).toEqual(request)
        expect(Option.isNone(yield* store.find(randomUUID()))).toBe(true)
      }))

    it.effect("lists one tenant's requests newest first, by state and by member", () =>
      Effect.gen(function*() {
        const store = yield* PatRequestRepository
        const tenantId = "9f8e7d6c-5b4a-4392-8180-7f6e5d4c3b2a"
        const first = newRequest({ tenantId, createdAt: at("2026-07-01T00:00:00.000Z") })
        const second = newRequest({ tenantId, userSub: "auth0|other", createdAt: at("2026-07-02T00:00:00.000Z") })
        const third = newRequest({ tenantId, createdAt: at("2026-07-03T00:00:00.000Z") })
        const elsewhere = newRequest({ createdAt: at("2026-07-04T00:00:00.000Z") })
        for (const r of [second, first, elsewhere, third]) yield* store.insert(r)
        yield* store.settle(first.id, { status: "denied", decidedAt: at("2026-07-05T00:00:00.000Z"), decidedBy: operator, reason: "Not needed." })
        const now = at("2026-07-06T00:00:00.000Z")
        const ids = (filter: Omit<Parameters<typeof store.list>[0], "now">) => Effect.map(store.list({ ...filter, now }), (rs) => rs.map((r) => r.id))
        expect(yield* ids({ tenantId })).toEqual([third.id, second.id, first.id])
        expect(yield* ids({ tenantId, status: "pending" })).toEqual([third.id, second.id])
        expect(yield* ids({ tenantId, userSub: "auth0|dev" })).toEqual([third.id, first.id])
        expect(yield* ids({ tenantId, status: "denied", userSub: "auth0|dev" })).toEqual([first.id])
        expect(yield* ids({ tenantId, status: "approved" })).toEqual([])
        expect(yield* ids({ tenantId, status: "expired" })).toEqual([])
      }))

    it.effect("reads a page after a request, in the list's order, ties on the filing time broken by id", () =>
      Effect.gen(function*() {
        const store = yield* PatRequestRepository
        const tenantId = "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d"
        const sameInstant = at("2026-07-02T00:00:00.000Z")
        const rows = [
          newRequest({ tenantId, createdAt: at("2026-07-01T00:00:00.000Z") }),
          newRequest({ tenantId, createdAt: sameInstant }),
          newRequest({ tenantId, createdAt: sameInstant }),
          newRequest({ tenantId, createdAt: at("2026-07-03T00:00:00.000Z") })
        ]
        for (const r of rows) yield* store.insert(r)
        const now = at("2026-07-04T00:00:00.000Z")
        const all = (yield* store.list({ tenantId, now })).map((r) => r.id)
        const [tied1, tied2] = [rows[1]!.id, rows[2]!.id].sort()
        expect(all).toEqual([rows[3]!.id, tied1, tied2, rows[0]!.id])
        const page = (after: string, limit: number) =>
          Effect.map(store.list({ tenantId, now, after: { createdAt: rows.find((r) => r.id === after)!.createdAt, id: after }, limit }), (rs) => rs.map((r) => r.id))
        expect(yield* page(tied1!, 5)).toEqual([tied2, rows[0]!.id])
        expect(yield* page(rows[3]!.id, 1)).toEqual([tied1])
        expect(yield* page(rows[0]!.id, 5)).toEqual([])
      }))

    it.effect("tells expired requests from pending ones at the time asked, and settles none past its expiry", () =>
      Effect.gen(function*() {
        const store = yield* PatRequestRepository
        const tenantId = "3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a"
        const old = newRequest({ tenantId, createdAt: at("2026-05-01T00:00:00.000Z") })
        const recent = newRequest({ tenantId, createdAt: at("2026-06-15T00:00:00.000Z") })
        for (const r of [old, recent]) yield* store.insert(r)
        // 30 days after the old one's filing, to the millisecond: it is expired from then on.
        const now = at("2026-05-31T00:00:00.000Z")
        const ids = (status: "pending" | "expired", at: typeof now) => Effect.map(store.list({ tenantId, status, now: at }), (rs) => rs.map((r) => r.id))
        expect(yield* ids("pending", now)).toEqual([recent.id])
        expect(yield* ids("expired", now)).toEqual([old.id])
        expect(yield* ids("pending", at("2026-05-30T23:59:59.999Z"))).toEqual([recent.id, old.id])
        expect(Option.getOrThrow(yield* store.find(old.id)).expiresAt).toEqual(now)
        const late = yield* store.settle(old.id, { status: "denied", decidedAt: now, decidedBy: operator, reason: "Too late." })
        expect(Option.isNone(late)).toBe(true)
        expect(Option.getOrThrow(yield* store.find(old.id)).status).toBe("pending")
        const inTime = yield* store.settle(recent.id, { status: "denied", decidedAt: now, decidedBy: operator, reason: "Not needed." })
        expect(Option.getOrThrow(inTime).status).toBe("denied")
      }))

    it.effect("counts a holder's requests pending at the time asked: not the expired, decided or closed ones, nor another member's or tenant's", () =>
      Effect.gen(function*() {
        const store = yield* PatRequestRepository
        const tenantId = randomUUID()
        const holder = { tenantId, userSub: "auth0|counted" }
        const early = newRequest({ ...holder, createdAt: at("2026-06-01T00:00:00.000Z") })
        const pending = [1, 2, 3].map((day) => newRequest({ ...holder, createdAt: at(`2026-07-0${day}T00:00:00.000Z`) }))
        const denied = newRequest({ ...holder, createdAt: at("2026-07-04T00:00:00.000Z") })
        const otherMember = newRequest({ tenantId, createdAt: at("2026-07-04T00:00:00.000Z") })
        const otherTenant = newRequest({ userSub: holder.userSub, createdAt: at("2026-07-04T00:00:00.000Z") })
        for (const request of [early, ...pending, denied, otherMember, otherTenant]) yield* store.insert(request)
        yield* store.settle(denied.id, { status: "denied", decidedAt: at("2026-07-05T00:00:00.000Z"), decidedBy: operator, reason: "No." })
        // The early one expires 30 days after its filing, to the millisecond.
        expect(yield* store.lockPendingOf(holder, at("2026-06-30T23:59:59.999Z"))).toBe(4)
        expect(yield* store.lockPendingOf(holder, at("2026-07-01T00:00:00.000Z"))).toBe(3)
        expect(yield* store.lockPendingOf(holder, at("2026-07-05T00:00:00.000Z"))).toBe(3)
        yield* store.closeHolder(holder, at("2026-07-03T00:00:00.000Z"), at("2026-07-05T00:00:00.000Z"), "Closed undecided: the requester was removed from the tenant.")
        expect(yield* store.lockPendingOf(holder, at("2026-07-05T00:00:00.000Z"))).toBe(1)
        expect(yield* store.lockPendingOf({ tenantId, userSub: "auth0|nobody" }, at("2026-07-05T00:00:00.000Z"))).toBe(0)
      }))

    it.effect("settles a pending request once, as approved with its token or denied with a reason", () =>
      Effect.gen(function*() {
        const store = yield* PatRequestRepository
        const pats = yield* Effect.serviceOption(PatRepository)
        const approvedOne = newRequest()
        const deniedOne = newRequest()
        yield* store.insert(approvedOne)
        yield* store.insert(deniedOne)
        // PostgreSQL holds the request to a token that exists: store the one the approval names.
        const { record } = newRecord()
        if (Option.isSome(pats)) yield* pats.value.insert(record)
        const approval = { status: "approved", decidedAt: at("2026-07-02T00:00:00.000Z"), decidedBy: admin, patId: record.id } as const
        const approved = Option.getOrThrow(yield* store.settle(approvedOne.id, approval))
        expect(approved).toEqual(new PatRequest({ ...approvedOne, status: "approved", decidedAt: approval.decidedAt, decidedBy: admin, patId: record.id }))
        expect(Option.getOrThrow(yield* store.find(approvedOne.id))).toEqual(approved)
        const denial = { status: "denied", decidedAt: at("2026-07-03T00:00:00.000Z"), decidedBy: operator, reason: "Use the team's token." } as const
        const denied = Option.getOrThrow(yield* store.settle(deniedOne.id, denial))
        expect(denied).toEqual(new PatRequest({ ...deniedOne, status: "denied", decidedAt: denial.decidedAt, decidedBy: operator, reason: denial.reason }))
        expect(Option.isNone(yield* store.settle(approvedOne.id, denial))).toBe(true)
        expect(Option.isNone(yield* store.settle(deniedOne.id, approval))).toBe(true)
        expect(Option.isNone(yield* store.settle(randomUUID(), denial))).toBe(true)
        expect(Option.getOrThrow(yield* store.find(deniedOne.id))).toEqual(denied)
      }))

    it.effect("closes a holder's requests pending at the time and filed before the removal, once, and no others", () =>
      Effect.gen(function*() {
        const store = yield* PatRequestRepository
        const tenantId = randomUUID()
        const holder = { tenantId, userSub: "auth0|leaver" }
        const removedAt = at("2026-07-10T00:00:00.000Z")
        const closedAt = at("2026-07-10T00:00:05.000Z")
        const pending = newRequest({ ...holder, createdAt: at("2026-07-09T00:00:00.000Z") })
        const expired = newRequest({ ...holder, createdAt: at("2026-06-01T00:00:00.000Z") })
        const denied = newRequest({ ...holder, createdAt: at("2026-07-08T00:00:00.000Z") })
        const afterRemoval = newRequest({ ...holder, createdAt: at("2026-07-10T00:00:01.000Z") })
        const otherMember = newRequest({ tenantId, createdAt: at("2026-07-09T00:00:00.000Z") })
        const otherTenant = newRequest({ userSub: holder.userSub, createdAt: at("2026-07-09T00:00:00.000Z") })
        for (const request of [pending, expired, denied, afterRemoval, otherMember, otherTenant]) yield* store.insert(request)
        yield* store.settle(denied.id, { status: "denied", decidedAt: at("2026-07-09T00:00:00.000Z"), decidedBy: operator, reason: "No." })
        const reason = "Closed undecided: the requester was removed from the tenant."
        const closed = yield* store.closeHolder(holder, removedAt, closedAt, reason)
        const expected = new PatRequest({ ...pending, status: "closed", decidedAt: closedAt, decidedBy: null, reason, patId: null })
        expect(closed).toEqual([expected])
        expect(Option.getOrThrow(yield* store.find(pending.id))).toEqual(expected)
        expect((yield* store.list({ tenantId, status: "closed", now: closedAt })).map((r) => r.id)).toEqual([pending.id])
        expect((yield* store.list({ tenantId, status: "pending", now: closedAt })).map((r) => r.id).sort()).toEqual([afterRemoval.id, otherMember.id].sort())
        for (const untouched of [expired, afterRemoval, otherMember, otherTenant]) expect(Option.getOrThrow(yield* store.find(untouched.id)).status).toBe("pending")
        expect(yield* store.closeHolder(holder, removedAt, closedAt, reason)).toEqual([])
        expect(Option.isNone(yield* store.settle(pending.id, { status: "denied", decidedAt: closedAt, decidedBy: operator, reason: "late" }))).toBe(true)
      }))
  })
})
