import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { NotFound } from "@portfolio/domain"
import { Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { NeverWritten, Scopes, TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { getApplication, listApplicationChanges } from "../../src/usecases/ApplicationQueries.js"
import { referentialRevisions } from "../../src/usecases/FunctionQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { writing } from "../../src/usecases/Writing.js"
import { adapters, StoredRows } from "../support/Adapters.js"
import { FreshReferentialPg } from "../support/FreshDatabase.js"
import { appInput, applicationRecord, tenantA, tenantB } from "../support/Fixtures.js"

/** Inserts `code` in a write of the tenant that stays open until `release` completes. */
const openWrite = (tenantId: string, code: string, release: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const applications = yield* ApplicationRepository
    const inserted = yield* Deferred.make<void>()
    const insert = applications.insert(tenantId, applicationRecord(code))
    const fiber = yield* Effect.forkChild(writing(tenantId, ["applications"], () => insert.pipe(Effect.andThen(Deferred.succeed(inserted, undefined)), Effect.andThen(Deferred.await(release)))))
    yield* Deferred.await(inserted)
    return fiber
  })

describe.each(adapters)("TenantRevisions and UnitOfWork $name", ({ layer: adapter }) => {
  layer(adapter, { timeout: 60_000 })((it) => {
    it.effect("counts from 0, moving with each committed write the scopes it names and no other, each tenant its own", () =>
      Effect.gen(function*() {
        const revisions = yield* TenantRevisions
        expect([yield* revisions.current(tenantA), yield* revisions.current(tenantB)]).toEqual([NeverWritten, NeverWritten])
        yield* writing(tenantA, ["applications"], () => Effect.void)
        expect(yield* revisions.current(tenantA)).toEqual({ applications: 1, functions: 0 })
        yield* writing(tenantA, ["functions"], () => Effect.void)
        expect(yield* revisions.current(tenantA)).toEqual({ applications: 1, functions: 2 })
        yield* writing(tenantA, Scopes, () => Effect.void)
        expect([yield* revisions.current(tenantA), yield* revisions.current(tenantB)]).toEqual([{ applications: 3, functions: 3 }, NeverWritten])
        expect(Exit.isFailure(yield* Effect.exit(writing(tenantB, Scopes, () => Effect.fail("refused"))))).toBe(true)
        expect(yield* revisions.current(tenantB)).toEqual(NeverWritten)
      }))

    it.effect("moves nothing for a write that writes nothing, which still checks after the previous writer's commit", () =>
      Effect.gen(function*() {
        const revisions = yield* TenantRevisions
        const applications = yield* ApplicationRepository
        const before = yield* revisions.current(tenantA)
        yield* writing(tenantA, Scopes, (unchanged) => unchanged)
        yield* writing(tenantA, [], () => Effect.void)
        expect(yield* revisions.current(tenantA)).toEqual(before)
        // A no-op must still queue behind the open write: its check has to see what that one wrote.
        const release = yield* Deferred.make<void>()
        const open = yield* openWrite(tenantA, "APP-HELD", release)
        const noOp = yield* Effect.forkChild(writing(tenantA, Scopes, (unchanged) => Effect.tap(applications.find(tenantA, "APP-HELD"), () => unchanged)))
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
        expect(noOp.pollUnsafe()).toBeUndefined()
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(open)
        expect(Option.isSome(yield* Fiber.join(noOp))).toBe(true)
        // The open write moved `applications` one step; the no-op, nothing.
        expect(yield* revisions.current(tenantA)).toEqual({ applications: Math.max(before.applications, before.functions) + 1, functions: before.functions })
      }))

    it.effect("answers the revisions of several tenants at once, leaving out those never written", () =>
      Effect.gen(function*() {
        const revisions = yield* TenantRevisions
        yield* writing(tenantA, Scopes, () => Effect.void)
        const a = yield* revisions.current(tenantA)
        // A tenant whose only write changed nothing was never written either.
        yield* writing(tenantB, Scopes, (unchanged) => unchanged)
        expect(yield* revisions.currentOf([tenantA, tenantB])).toEqual(new Map([[tenantA, a]]))
        yield* writing(tenantB, ["functions"], () => Effect.void)
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
              Effect.andThen(inner.appendChanges(tenantId, entries), Effect.die("crash after the change log"))
          }))
        )
        const revision = yield* referentialRevisions(tenantA)
        const before = yield* stored(tenantA)
        const failing = putApplication(tenantA, "APP-ATOMIC", appInput({ name: "Atomic", regulations: "DORA", roleAssignments: "ARCHITECT:a" }), "ops")
        const exit = yield* Effect.exit(Effect.provide(failing, FailingAfterLog.pipe(Layer.provide(Layer.succeedContext(yield* Effect.context<ApplicationRepository>())))))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* stored(tenantA)).toEqual(before)
        expect(yield* referentialRevisions(tenantA)).toEqual(revision)
        expect(yield* Effect.flip(getApplication(tenantA, "APP-ATOMIC"))).toBeInstanceOf(NotFound)
        // The same write without the crash goes through: criticality, dataClassification, regulations, roleAssignments, status.
        yield* putApplication(tenantA, "APP-ATOMIC", appInput({ name: "Atomic", regulations: "DORA", roleAssignments: "ARCHITECT:a" }), "ops")
        expect((yield* stored(tenantA)).application_changes).toBe(before.application_changes + 5)
        expect(yield* referentialRevisions(tenantA)).toEqual({ applications: Math.max(revision.applications, revision.functions) + 1, functions: revision.functions })
      }))

    it.effect("serialises concurrent identical PUTs of one new code: one creation, the others no-ops, no error", () =>
      Effect.gen(function*() {
        const before = yield* referentialRevisions(tenantA)
        yield* Effect.all(Array.from({ length: 8 }, () => putApplication(tenantA, "APP-SAME", appInput({ name: "Same" }), "ops")), { concurrency: "unbounded" })
        const creations = (yield* listApplicationChanges(tenantA, "APP-SAME", 200)).filter((entry) => entry.field === "status")
        expect(creations.length).toBe(1)
        expect(yield* referentialRevisions(tenantA)).toEqual({ applications: Math.max(before.applications, before.functions) + 1, functions: before.functions })
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
        const revision = yield* referentialRevisions(tenantA)
        const release = yield* Deferred.make<void>()
        const open = yield* openWrite(tenantA, "APP-PENDING", release)
        expect(yield* applications.find(tenantA, "APP-PENDING")).toEqual(Option.none())
        expect(yield* referentialRevisions(tenantA)).toEqual(revision)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(open)
        expect(Option.isSome(yield* applications.find(tenantA, "APP-PENDING"))).toBe(true)
        expect((yield* referentialRevisions(tenantA)).applications).toBeGreaterThan(revision.applications)
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

describe("TenantRevisionsPg beside a previous version", () => {
  layer(FreshReferentialPg, { timeout: 60_000 })((it) => {
    // What the previous version runs on every write, during a rollout or after a rollback.
    const previousVersionWrites = (tenantId: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`
          INSERT INTO referential.tenant_revisions (tenant_id, revision) VALUES (${tenantId}, 1)
          ON CONFLICT (tenant_id) DO UPDATE SET revision = referential.tenant_revisions.revision + 1`)

    it.effect("reads a write that moved the revision alone as a move of every scope, and keeps it so after scoped writes", () =>
      Effect.gen(function*() {
        const revisions = yield* TenantRevisions
        yield* writing(tenantA, ["functions"], () => Effect.void)
        expect(yield* revisions.current(tenantA)).toEqual({ applications: 0, functions: 1 })
        yield* previousVersionWrites(tenantA)
        expect(yield* revisions.current(tenantA)).toEqual({ applications: 2, functions: 2 })
        yield* writing(tenantA, ["applications"], () => Effect.void)
        expect(yield* revisions.current(tenantA)).toEqual({ applications: 3, functions: 2 })
        yield* previousVersionWrites(tenantA)
        yield* previousVersionWrites(tenantA)
        yield* writing(tenantA, ["functions"], () => Effect.void)
        expect(yield* revisions.current(tenantA)).toEqual({ applications: 5, functions: 6 })
        // A row of before the scopes (0 by default), or a tenant only the previous version wrote.
        yield* previousVersionWrites(tenantB)
        expect(yield* revisions.currentOf([tenantA, tenantB])).toEqual(
          new Map([[tenantA, { applications: 5, functions: 6 }], [tenantB, { applications: 1, functions: 1 }]])
        )
      }))
  })
})
