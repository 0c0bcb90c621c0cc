import { describe, expect, layer } from "@effect/vitest"
import { NotFound } from "@portfolio/domain"
import { Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { getApplication, listApplicationChanges } from "../../src/usecases/ApplicationQueries.js"
import { referentialRevision } from "../../src/usecases/FunctionQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { writing } from "../../src/usecases/Writing.js"
import { adapters, StoredRows } from "../support/Adapters.js"
import { appInput, applicationRecord, tenantA, tenantB } from "../support/Fixtures.js"

/** Inserts `code` in a write of the tenant that stays open until `release` completes. */
const openWrite = (tenantId: string, code: string, release: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const applications = yield* ApplicationRepository
    const inserted = yield* Deferred.make<void>()
    const insert = applications.insert(tenantId, applicationRecord(code))
    const fiber = yield* Effect.fork(writing(tenantId, insert.pipe(Effect.zipRight(Deferred.succeed(inserted, undefined)), Effect.zipRight(Deferred.await(release)))))
    yield* Deferred.await(inserted)
    return fiber
  })

describe.each(adapters)("TenantRevisions and UnitOfWork $name", ({ layer: adapter }) => {
  layer(adapter, { timeout: 60_000 })((it) => {
    it.effect("counts from 0, one step per committed write, each tenant its own", () =>
      Effect.gen(function*() {
        const revisions = yield* TenantRevisions
        expect([yield* revisions.current(tenantA), yield* revisions.current(tenantB)]).toEqual([0, 0])
        yield* writing(tenantA, Effect.void)
        yield* writing(tenantA, Effect.void)
        expect([yield* revisions.current(tenantA), yield* revisions.current(tenantB)]).toEqual([2, 0])
        expect(Exit.isFailure(yield* Effect.exit(writing(tenantB, Effect.fail("refused"))))).toBe(true)
        expect(yield* revisions.current(tenantB)).toBe(0)
      }))

    it.effect("answers the revisions of several tenants at once, leaving out those never written", () =>
      Effect.gen(function*() {
        const revisions = yield* TenantRevisions
        yield* writing(tenantA, Effect.void)
        const a = yield* revisions.current(tenantA)
        expect(yield* revisions.currentOf([tenantA, tenantB])).toEqual(new Map([[tenantA, a]]))
        yield* writing(tenantB, Effect.void)
        expect(yield* revisions.currentOf([tenantB, tenantA])).toEqual(new Map([[tenantA, a], [tenantB, yield* revisions.current(tenantB)]]))
        expect(yield* revisions.currentOf([])).toEqual(new Map())
      }))

    it.effect("writes the row and its change log atomically: a failure after both leaves neither", () =>
      Effect.gen(function*() {
        const stored = yield* StoredRows
        const FailingAfterLog = Layer.effect(
          ApplicationRepository,
          Effect.map(ApplicationRepository, (inner) => ({
            ...inner,
            appendChanges: (tenantId: string, entries: Parameters<typeof inner.appendChanges>[1]) =>
              Effect.zipRight(inner.appendChanges(tenantId, entries), Effect.die("crash after the change log"))
          }))
        )
        const revision = yield* referentialRevision(tenantA)
        const before = yield* stored(tenantA)
        const failing = putApplication(tenantA, "APP-ATOMIC", appInput({ name: "Atomic", regulations: "DORA", roleAssignments: "ARCHITECT:a" }), "ops")
        const exit = yield* Effect.exit(Effect.provide(failing, FailingAfterLog.pipe(Layer.provide(Layer.succeedContext(yield* Effect.context<ApplicationRepository>())))))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* stored(tenantA)).toEqual(before)
        expect(yield* referentialRevision(tenantA)).toBe(revision)
        expect(yield* Effect.flip(getApplication(tenantA, "APP-ATOMIC"))).toBeInstanceOf(NotFound)
        // The same write without the crash goes through: criticality, dataClassification, regulations, roleAssignments, status.
        yield* putApplication(tenantA, "APP-ATOMIC", appInput({ name: "Atomic", regulations: "DORA", roleAssignments: "ARCHITECT:a" }), "ops")
        expect((yield* stored(tenantA)).application_changes).toBe(before.application_changes + 5)
        expect(yield* referentialRevision(tenantA)).toBe(revision + 1)
      }))

    it.effect("serialises concurrent PUTs of one new code: one creation, no error", () =>
      Effect.gen(function*() {
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => putApplication(tenantA, "APP-RACE", appInput({ name: "Race", rtoHours: i }), `writer-${i}`)),
          { concurrency: "unbounded" }
        )
        expect(results.length).toBe(8)
        const creations = (yield* listApplicationChanges(tenantA, "APP-RACE", 200)).filter((entry) => entry.field === "status")
        expect(creations.length).toBe(1)
      }))

    it.effect("shows a write to other readers only once it commits, its revision with it", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        const revision = yield* referentialRevision(tenantA)
        const release = yield* Deferred.make<void>()
        const open = yield* openWrite(tenantA, "APP-PENDING", release)
        expect(yield* applications.find(tenantA, "APP-PENDING")).toEqual(Option.none())
        expect(yield* referentialRevision(tenantA)).toBe(revision)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(open)
        expect(Option.isSome(yield* applications.find(tenantA, "APP-PENDING"))).toBe(true)
        expect(yield* referentialRevision(tenantA)).toBe(revision + 1)
      }))

    it.effect("lets the writers of other tenants go on while a tenant's write is open", () =>
      Effect.gen(function*() {
        const release = yield* Deferred.make<void>()
        const open = yield* openWrite(tenantA, "APP-SLOW", release)
        // With one lock for every tenant, this would wait for the release forever.
        yield* putApplication(tenantB, "APP-OTHER", appInput({ name: "Other" }), "ops")
        expect((yield* getApplication(tenantB, "APP-OTHER")).code).toBe("APP-OTHER")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(open)
      }))
  })
})
