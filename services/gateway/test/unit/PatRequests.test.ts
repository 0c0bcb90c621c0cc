import { describe, expect, layer } from "@effect/vitest"
import { MemberRemoved, NewPatRequest, PatRequestApprover, PatRequestPendingMax } from "@portfolio/domain"
import { DateTime, Duration, Effect, Layer, Logger, Option } from "effect"
import { TestClock } from "effect/testing"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import type { AdminCall } from "../../src/domain/OperatorActions.js"
import { hashPat } from "../../src/domain/Pat.js"
import { PatRepository } from "../../src/ports/PatRepository.js"
import { listPats, revokePat } from "../../src/usecases/ManagePats.js"
import { applyMemberRemoval } from "../../src/usecases/MemberRemoval.js"
import { approvePatRequest, denyPatRequest, filePatRequest, listPatRequests } from "../../src/usecases/PatRequests.js"
import { MembershipDeskMemory } from "../support/MembershipDeskMemory.js"
import { PatRepositoryMemory } from "../support/PatRepositoryMemory.js"
import { SecurityLogMemory } from "@portfolio/platform/testing"
import { GatewayStoresMemory } from "../support/UnitOfWorkMemory.js"

const tenantId = "2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a2b3c4d"
const operator: AdminCall = { subject: "operator:ops", ip: "127.0.0.1", userAgent: "" }
const admin = new PatRequestApprover({ tenantId, userSub: "auth0|admin", email: "admin@example.com", role: "tenant-admin" })

let n = 0
/** A request of a member of its own userSub (unless given), so that each case sees only its own. */
const file = (overrides: Partial<ConstructorParameters<typeof NewPatRequest>[0]> = {}) => {
  const request = new NewPatRequest({
    tenantId,
    userSub: `auth0|dev-${++n}`,
    email: "dev@example.com",
    role: "architect",
    scope: "write",
    days: 30,
    justification: "Nightly export of the application list to the CMDB.",
    ...overrides
  })
  // Filed for a member as provisioning holds them, as the console and the CLI file.
  return Effect.andThen(Effect.flatMap(MembershipDeskMemory, (m) => m.join(request)), filePatRequest(request, operator))
}

const logged: Array<string> = []
const capturing = Logger.make(({ logLevel, message }) => void logged.push(`${logLevel.toUpperCase()} ${JSON.stringify(message)}`))

const testLayer = Layer.mergeAll(GatewayStoresMemory, PatCacheMemory, Logger.layer([capturing]))

describe("PAT requests (use cases on the memory stores)", () => {
  layer(testLayer)((it) => {
    it.effect("files a pending request; a viewer asking for write is refused and nothing is kept", () =>
      Effect.gen(function*() {
        const filed = yield* file()
        expect(filed).toMatchObject({ status: "pending", scope: "write", days: 30, decidedAt: null, decidedBy: null, reason: null, patId: null })
        expect((yield* listPatRequests({ tenantId, userSub: filed.userSub })).map((r) => r.id)).toEqual([filed.id])
        const refused = yield* Effect.flip(file({ role: "viewer", userSub: "auth0|viewer" }))
        expect(refused._tag).toBe("InvalidRequest")
        expect(yield* listPatRequests({ tenantId, userSub: "auth0|viewer" })).toEqual([])
      }))

    it.effect("a member holds at most 5 pending requests in a tenant: one more is 409 and keeps nothing; a decision or an expiry frees a place", () =>
      Effect.gen(function*() {
        const events = yield* SecurityLogMemory
        const userSub = "auth0|flooder"
        const filed: Array<string> = []
        for (let i = 0; i < PatRequestPendingMax; i++) {
          filed.push((yield* file({ userSub })).id)
          yield* TestClock.adjust(Duration.seconds(1))
        }
        const logBefore = (yield* events.all).length
        const refused = yield* Effect.flip(file({ userSub }))
        expect(refused).toMatchObject({
          _tag: "Conflict",
          detail: "you have 5 pending PAT requests in this tenant, the most a member may have (5): wait for a tenant-admin to decide one (or ask them to deny one you no longer need), or for one to expire 30 days after its filing. Nothing was filed."
        })
        const pendingIds = Effect.map(listPatRequests({ tenantId, userSub, status: "pending" }), (rs) => rs.map((r) => r.id))
        expect(yield* pendingIds).toEqual([...filed].reverse())
        expect((yield* events.all).length).toBe(logBefore)
        // Another member of the tenant, and the same member in another tenant, are not held to this one's count.
        expect((yield* file()).status).toBe("pending")
        expect((yield* file({ userSub, tenantId: "7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a" })).status).toBe("pending")
        // A decision frees a place, for one request.
        yield* denyPatRequest(operator, filed[0]!, admin, "Not needed.")
        const refiled = yield* file({ userSub })
        expect((yield* Effect.flip(file({ userSub })))._tag).toBe("Conflict")
        // Expired requests are no longer pending: 30 days after the first filings, those free their places.
        yield* TestClock.adjust(Duration.days(30))
        expect((yield* file({ userSub })).status).toBe("pending")
        expect(yield* pendingIds).toHaveLength(1)
        expect(refiled.status).toBe("pending")
      }))

    it.effect("of 20 concurrent filings of one member, exactly 5 are kept and 15 are 409", () =>
      Effect.gen(function*() {
        const userSub = "auth0|concurrent-flooder"
        const outcomes = yield* Effect.all(Array.from({ length: 20 }, () => Effect.result(file({ userSub }))), { concurrency: "unbounded" })
        expect(outcomes.filter((o) => o._tag === "Success")).toHaveLength(PatRequestPendingMax)
        expect(outcomes.flatMap((o) => (o._tag === "Failure" ? [o.failure._tag] : []))).toEqual(Array(20 - PatRequestPendingMax).fill("Conflict"))
        expect(yield* listPatRequests({ tenantId, userSub })).toHaveLength(PatRequestPendingMax)
      }))

    it.effect("approval mints the requester's token, valid the requested days from the approval, shown once", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const filed = yield* file({ role: "portfolio-manager", scope: "read", days: 7 })
        yield* TestClock.adjust(Duration.days(2))
        const approvedAt = yield* DateTime.now
        const { pat, request } = yield* approvePatRequest(operator, filed.id, undefined)
        expect(request).toMatchObject({ status: "approved", patId: pat.id, reason: null })
        expect(request.decidedAt).toEqual(approvedAt)
        expect({ ...request.decidedBy }).toEqual({ userSub: "operator:ops", email: null, role: "operator" })
        expect(pat.expiresAt).toEqual(DateTime.add(approvedAt, { days: 7 }))
        const stored = Option.getOrThrow(yield* memory.get(pat.id))
        expect(stored).toMatchObject({ tenantId, userSub: filed.userSub, email: "dev@example.com", role: "portfolio-manager", scope: "read", revokedAt: null })
        expect(stored.tokenHash).toEqual(hashPat(pat.token))
        const [listed] = yield* listPatRequests({ tenantId, userSub: filed.userSub })
        expect(listed).toEqual(request)
      }))

    it.effect("a request is decided once: a second approval or a denial afterwards is 409 and mints nothing", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const filed = yield* file()
        yield* approvePatRequest(operator, filed.id, admin)
        const tokens = (yield* memory.all).length
        const again = yield* Effect.flip(approvePatRequest(operator, filed.id, undefined))
        expect(again).toMatchObject({ _tag: "Conflict", detail: `PAT request ${filed.id} is approved: only a pending request can be approved or denied.` })
        expect((yield* Effect.flip(denyPatRequest(operator, filed.id, undefined, "too late")))._tag).toBe("Conflict")
        expect((yield* memory.all).length).toBe(tokens)
      }))

    it.effect("a request undecided for 30 days expires: listed as expired, neither approved nor denied (409), no token", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const filed = yield* file()
        expect(filed.expiresAt).toEqual(DateTime.add(filed.createdAt, { days: 30 }))
        const tokens = (yield* memory.all).length
        yield* TestClock.adjust(Duration.millis(30 * 86_400_000 - 1))
        expect((yield* listPatRequests({ tenantId, userSub: filed.userSub, status: "pending" })).map((r) => r.id)).toEqual([filed.id])
        yield* TestClock.adjust(Duration.millis(1))
        const listed = yield* listPatRequests({ tenantId, userSub: filed.userSub })
        expect(listed.map((r) => [r.id, r.status])).toEqual([[filed.id, "expired"]])
        expect(yield* listPatRequests({ tenantId, userSub: filed.userSub, status: "pending" })).toEqual([])
        expect((yield* listPatRequests({ tenantId, userSub: filed.userSub, status: "expired" })).map((r) => r.id)).toEqual([filed.id])
        const approval = yield* Effect.flip(approvePatRequest(operator, filed.id, admin))
        expect(approval).toMatchObject({
          _tag: "Conflict",
          detail: `PAT request ${filed.id} is expired: it was not decided within 30 days; the member files a new one.`
        })
        expect((yield* Effect.flip(denyPatRequest(operator, filed.id, undefined, "late")))._tag).toBe("Conflict")
        expect((yield* memory.all).length).toBe(tokens)
      }))

    it.effect("of concurrent approvals, exactly one mints a token", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const filed = yield* file()
        const before = (yield* memory.all).length
        const outcomes = yield* Effect.all(Array.from({ length: 20 }, () => Effect.result(approvePatRequest(operator, filed.id, undefined))), {
          concurrency: "unbounded"
        })
        expect(outcomes.filter((o) => o._tag === "Success")).toHaveLength(1)
        expect(outcomes.filter((o) => o._tag === "Failure").map((o) => o.failure._tag)).toEqual(Array(19).fill("Conflict"))
        expect((yield* memory.all).length).toBe(before + 1)
      }))

    it.effect("denial records the reason and who denied; the request can then not be approved", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const filed = yield* file()
        const before = (yield* memory.all).length
        const denied = yield* denyPatRequest(operator, filed.id, admin, "Use the team's read token.")
        expect(denied).toMatchObject({ status: "denied", reason: "Use the team's read token.", patId: null })
        expect({ ...denied.decidedBy }).toEqual({ userSub: "auth0|admin", email: "admin@example.com", role: "tenant-admin" })
        expect((yield* Effect.flip(approvePatRequest(operator, filed.id, admin)))._tag).toBe("Conflict")
        expect((yield* memory.all).length).toBe(before)
      }))

    it.effect("a tenant-admin may not decide their own request; an operator may", () =>
      Effect.gen(function*() {
        const own = yield* file({ userSub: admin.userSub, role: "tenant-admin" })
        expect((yield* Effect.flip(approvePatRequest(operator, own.id, admin)))._tag).toBe("InsufficientScope")
        expect((yield* Effect.flip(denyPatRequest(operator, own.id, admin, "no")))._tag).toBe("InsufficientScope")
        expect((yield* approvePatRequest(operator, own.id, undefined)).request.status).toBe("approved")
      }))

    it.effect("an unknown id is 404", () =>
      Effect.gen(function*() {
        const unknown = "0f1e2d3c-4b5a-4968-8776-655443322110"
        expect(yield* Effect.flip(approvePatRequest(operator, unknown, undefined))).toMatchObject({ _tag: "NotFound", detail: `No PAT request has the id ${unknown}.` })
        expect((yield* Effect.flip(denyPatRequest(operator, unknown, undefined, "no")))._tag).toBe("NotFound")
      }))

    it.effect("a token that cannot be stored leaves the request pending, to be approved again", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const filed = yield* file()
        yield* memory.setDown(true)
        const failed = yield* Effect.flip(approvePatRequest(operator, filed.id, undefined))
        yield* memory.setDown(false)
        expect(failed._tag).toBe("Unavailable")
        const [after] = yield* listPatRequests({ tenantId, userSub: filed.userSub })
        expect(after).toMatchObject({ status: "pending", patId: null, decidedBy: null })
        expect((yield* approvePatRequest(operator, filed.id, undefined)).request.status).toBe("approved")
      }))

    it.effect("lists a tenant's requests newest first, by state and by member", () =>
      Effect.gen(function*() {
        const otherTenant = "7a7a7a7a-7a7a-4a7a-8a7a-7a7a7a7a7a7a"
        const first = yield* file({ tenantId: otherTenant, userSub: "auth0|lister" })
        yield* TestClock.adjust(Duration.seconds(1))
        const second = yield* file({ tenantId: otherTenant, userSub: "auth0|lister" })
        yield* TestClock.adjust(Duration.seconds(1))
        const third = yield* file({ tenantId: otherTenant })
        yield* denyPatRequest(operator, second.id, undefined, "Not needed.")
        const ids = (filter: Parameters<typeof listPatRequests>[0]) => Effect.map(listPatRequests(filter), (rs) => rs.map((r) => r.id))
        expect(yield* ids({ tenantId: otherTenant })).toEqual([third.id, second.id, first.id])
        expect(yield* ids({ tenantId: otherTenant, status: "pending" })).toEqual([third.id, first.id])
        expect(yield* ids({ tenantId: otherTenant, status: "denied", userSub: "auth0|lister" })).toEqual([second.id])
        expect(yield* ids({ tenantId: otherTenant, userSub: "auth0|lister" })).toEqual([second.id, first.id])
      }))

    it.effect("a member sees their tokens in force, never the token, and revokes only their own", () =>
      Effect.gen(function*() {
        const store = yield* PatRepository
        const holder = { tenantId, userSub: "auth0|holder" }
        const approve = (days: number) =>
          Effect.flatMap(file({ ...holder, days }), (filed) => approvePatRequest(operator, filed.id, undefined))
        const old = (yield* approve(1)).pat
        yield* TestClock.adjust(Duration.hours(1))
        const kept = (yield* approve(30)).pat
        yield* TestClock.adjust(Duration.hours(1))
        const revoked = (yield* approve(30)).pat
        const someoneElse = (yield* Effect.flatMap(file(), (filed) => approvePatRequest(operator, filed.id, undefined))).pat
        yield* revokePat(revoked.id, operator, holder)
        yield* TestClock.adjust(Duration.days(1))
        const listed = yield* listPats(holder)
        expect(listed.map((p) => ({ ...p }))).toEqual([
          { id: kept.id, tokenPrefix: kept.tokenPrefix, scope: "write", createdAt: DateTime.subtract(kept.expiresAt, { days: 30 }), expiresAt: kept.expiresAt, lastUsedAt: null }
        ])
        expect(JSON.stringify(listed)).not.toContain(kept.token)
        expect(listed.map((p) => p.id)).not.toContain(old.id)
        const refused = yield* Effect.flip(revokePat(someoneElse.id, operator, holder))
        expect(refused._tag).toBe("NotFound")
        const untouched = Option.getOrThrow(yield* store.findByHash(hashPat(someoneElse.token)))
        expect(untouched.revokedAt).toBeNull()
      }))

    it.effect("a request carries no authority: a requester removed since the filing gets nothing, a 409 that changes nothing", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const memberships = yield* MembershipDeskMemory
        const filed = yield* file()
        yield* memberships.leave(tenantId, filed.userSub)
        const before = (yield* memory.all).length
        const refused = yield* Effect.flip(approvePatRequest(operator, filed.id, admin))
        expect(refused).toMatchObject({
          _tag: "Conflict",
          detail: `PAT request ${filed.id} cannot be approved: dev@example.com is no longer a member of the tenant. Nothing was minted; deny the request or let it close.`
        })
        expect((yield* memory.all).length).toBe(before)
        const [after] = yield* listPatRequests({ tenantId, userSub: filed.userSub })
        expect(after).toMatchObject({ status: "pending", patId: null })
        // Invited back (a new membership): the same request is approvable again, as they now stand.
        yield* memberships.join({ tenantId, userSub: filed.userSub, email: "dev@example.com", role: "architect" })
        expect((yield* approvePatRequest(operator, filed.id, admin)).request.status).toBe("approved")
      }))

    it.effect("a requester whose role no longer allows the scope gets nothing; the token of one still allowed has their role of now", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const memberships = yield* MembershipDeskMemory
        // An admin's write request; removed and invited back as a viewer before another admin approves.
        const demoted = yield* file({ role: "tenant-admin", scope: "write" })
        yield* memberships.join({ tenantId, userSub: demoted.userSub, email: "dev@example.com", role: "viewer" })
        const before = (yield* memory.all).length
        const refused = yield* Effect.flip(approvePatRequest(operator, demoted.id, admin))
        expect(refused).toMatchObject({
          _tag: "Conflict",
          detail: `PAT request ${demoted.id} cannot be approved: its requester's role is now 'viewer', which allows a token of scope 'read' at most, not 'write'. Nothing was minted; the member files a new request.`
        })
        expect((yield* memory.all).length).toBe(before)
        // Still allowed the scope, under another role and e-mail: the token is recorded as they are now.
        const moved = yield* file({ role: "tenant-admin", scope: "read" })
        yield* memberships.join({ tenantId, userSub: moved.userSub, email: "dev.new@example.com", role: "viewer" })
        const { pat } = yield* approvePatRequest(operator, moved.id, admin)
        expect(Option.getOrThrow(yield* memory.get(pat.id))).toMatchObject({ role: "viewer", email: "dev.new@example.com", scope: "read" })
      }))

    it.effect("while the record of members cannot be read, nothing is minted and the request stays pending", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const memberships = yield* MembershipDeskMemory
        const filed = yield* file()
        const before = (yield* memory.all).length
        yield* memberships.setDown(true)
        const failed = yield* Effect.flip(approvePatRequest(operator, filed.id, admin))
        yield* memberships.setDown(false)
        expect(failed._tag).toBe("Unavailable")
        expect((yield* memory.all).length).toBe(before)
        expect((yield* approvePatRequest(operator, filed.id, admin)).request.status).toBe("approved")
      }))

    it.effect("a removal closes the member's pending requests filed before it, says why, and nothing can decide them then", () =>
      Effect.gen(function*() {
        const memberships = yield* MembershipDeskMemory
        const userSub = "auth0|leaver"
        const pending = yield* file({ userSub })
        const decided = yield* file({ userSub })
        yield* denyPatRequest(operator, decided.id, admin, "Not needed.")
        const someoneElse = yield* file()
        yield* TestClock.adjust(Duration.seconds(1))
        const removal = MemberRemoved.make({ id: "5e4d3c2b-1a09-4f8e-8d7c-6b5a49382716", type: "member.removed", occurredAt: yield* DateTime.now, tenantId, userSub })
        yield* memberships.leave(tenantId, userSub)
        yield* TestClock.adjust(Duration.seconds(1))
        const closedAt = yield* DateTime.now
        const { closed } = yield* applyMemberRemoval(removal)
        expect(closed.map((r) => r.id)).toEqual([pending.id])
        const byId = new Map((yield* listPatRequests({ tenantId })).map((r) => [r.id, r]))
        expect(byId.get(pending.id)).toMatchObject({
          status: "closed",
          decidedAt: closedAt,
          decidedBy: null,
          reason: "Closed undecided: the requester was removed from the tenant.",
          patId: null
        })
        expect(byId.get(decided.id)?.status).toBe("denied")
        expect(byId.get(someoneElse.id)?.status).toBe("pending")
        expect(yield* Effect.flip(approvePatRequest(operator, pending.id, admin))).toMatchObject({
          _tag: "Conflict",
          detail: `PAT request ${pending.id} is closed: its requester was removed from the tenant; it can no longer be decided.`
        })
        expect((yield* Effect.flip(denyPatRequest(operator, pending.id, admin, "late")))._tag).toBe("Conflict")
        // Invited back, they file again: a replay of the old removal closes nothing new.
        yield* memberships.join({ tenantId, userSub, email: "dev@example.com", role: "architect" })
        const refiled = yield* file({ userSub })
        expect((yield* applyMemberRemoval(removal)).closed).toEqual([])
        expect((yield* listPatRequests({ tenantId, userSub, status: "pending" })).map((r) => r.id)).toEqual([refiled.id])
        expect((yield* listPatRequests({ tenantId, userSub, status: "closed" })).map((r) => r.id)).toEqual([pending.id])
      }))

    it.effect("logs each filing and decision at Info, never the token", () =>
      Effect.gen(function*() {
        const filed = yield* file()
        const { pat } = yield* approvePatRequest(operator, filed.id, undefined)
        const denied = yield* file()
        yield* denyPatRequest(operator, denied.id, undefined, "Not needed.")
        const about = (id: string) => logged.filter((line) => line.includes(id))
        expect(about(filed.id).map((line) => line.split(" ")[0])).toEqual(["INFO", "INFO"])
        expect(about(filed.id).join("\n")).toContain("PAT request approved")
        expect(about(filed.id).join("\n")).toContain(pat.tokenPrefix)
        expect(about(denied.id).join("\n")).toContain("PAT request denied")
        expect(logged.join("\n")).not.toContain(pat.token)
      }))
  })
})
