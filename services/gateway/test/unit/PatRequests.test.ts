import { describe, expect, layer } from "@effect/vitest"
import { NewPatRequest, PatRequestApprover } from "@portfolio/domain"
import { DateTime, Duration, Effect, Layer, Logger, Option, TestClock } from "effect"
import { PatCacheMemoryLive } from "../../src/adapters/memory/PatCacheMemory.js"
import type { AdminCall } from "../../src/domain/OperatorActions.js"
import { hashPat } from "../../src/domain/Pat.js"
import { PatStore } from "../../src/ports/PatStore.js"
import { listPats, revokePat } from "../../src/usecases/ManagePats.js"
import { approvePatRequest, denyPatRequest, filePatRequest, listPatRequests } from "../../src/usecases/PatRequests.js"
import { MemoryPatStore } from "../support/MemoryPatStore.js"
import { MemoryGatewayStores } from "../support/MemoryUnitOfWork.js"

const tenantId = "2c4e6a8b-0d1f-4a3b-8c5d-7e9f1a2b3c4d"
const operator: AdminCall = { subject: "operator:ops", ip: "127.0.0.1", userAgent: "" }
const admin = new PatRequestApprover({ tenantId, userSub: "auth0|admin", email: "admin@example.com", role: "tenant-admin" })

let n = 0
/** A request of a member of its own userSub (unless given), so that each case sees only its own. */
const file = (overrides: Partial<ConstructorParameters<typeof NewPatRequest>[0]> = {}) =>
  filePatRequest(
    new NewPatRequest({
      tenantId,
      userSub: `auth0|dev-${++n}`,
      email: "dev@example.com",
      role: "architect",
      scope: "write",
      days: 30,
      justification: "Nightly export of the application list to the CMDB.",
      ...overrides
    }),
    operator
  )

const logged: Array<string> = []
const capturing = Logger.make(({ logLevel, message }) => void logged.push(`${logLevel.label} ${JSON.stringify(message)}`))

const testLayer = Layer.mergeAll(MemoryGatewayStores, PatCacheMemoryLive, Logger.replace(Logger.defaultLogger, capturing))

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

    it.effect("approval mints the requester's token, valid the requested days from the approval, shown once", () =>
      Effect.gen(function*() {
        const memory = yield* MemoryPatStore
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
        const memory = yield* MemoryPatStore
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
        const memory = yield* MemoryPatStore
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
        const memory = yield* MemoryPatStore
        const filed = yield* file()
        const before = (yield* memory.all).length
        const outcomes = yield* Effect.all(Array.from({ length: 20 }, () => Effect.either(approvePatRequest(operator, filed.id, undefined))), {
          concurrency: "unbounded"
        })
        expect(outcomes.filter((o) => o._tag === "Right")).toHaveLength(1)
        expect(outcomes.filter((o) => o._tag === "Left").map((o) => o.left._tag)).toEqual(Array(19).fill("Conflict"))
        expect((yield* memory.all).length).toBe(before + 1)
      }))

    it.effect("denial records the reason and who denied; the request can then not be approved", () =>
      Effect.gen(function*() {
        const memory = yield* MemoryPatStore
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
        const memory = yield* MemoryPatStore
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
        const store = yield* PatStore
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
