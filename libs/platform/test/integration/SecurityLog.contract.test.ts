import { describe, expect, layer } from "@effect/vitest"
import { SecurityEvent } from "@portfolio/domain"
import { DateTime, Effect, Exit, Layer, Semaphore } from "effect"
import { randomUUID } from "node:crypto"
import { createSecurityEventsTable, indexSecurityEventsByTime, SecurityLog, SecurityLogPg } from "../../src/security/SecurityLog.js"
import { SchemaMigrationsLive } from "../../src/sql/Migrations.js"
import { UnitOfWork, UnitOfWorkPg } from "../../src/sql/UnitOfWork.js"
import { FreshPgLive } from "../../testing/FreshDatabase.js"
import { SecurityLogMemory } from "../../testing/SecurityLogMemory.js"

// A service's schema of its own, with entries of no tenant allowed, as the console's.
const schema = "logged"
const Database = SchemaMigrationsLive(schema, {
  "0001_security_events": createSecurityEventsTable(schema, { tenant: "optional" }),
  "0002_security_events_at": indexSecurityEventsByTime(schema)
}).pipe(Layer.provideMerge(FreshPgLive("it_security_log", 4)))

/** The double's unit of work, as the services' in memory run theirs: a failed one restores the log. */
const UnitOfWorkMemory = Layer.effect(
  UnitOfWork,
  Effect.gen(function*() {
    const log = yield* SecurityLogMemory
    const one = yield* Semaphore.make(1)
    return UnitOfWork.of({
      run: (work) =>
        one.withPermits(1)(Effect.gen(function*() {
          const restore = yield* log.snapshot
          const exit = yield* Effect.exit(work)
          if (Exit.isFailure(exit)) yield* restore
          return yield* exit
        }))
    })
  })
).pipe(Layer.provideMerge(SecurityLogMemory.layer))

/** The same cases against the production adapter and the test double the services' tests rely on. */
const adapters: ReadonlyArray<{ readonly name: string; readonly log: Layer.Layer<SecurityLog | UnitOfWork, unknown> }> = [
  { name: "SecurityLogPg (fresh database)", log: Layer.mergeAll(SecurityLogPg(schema), UnitOfWorkPg).pipe(Layer.provideMerge(Database)) },
  { name: "SecurityLogMemory (test double)", log: UnitOfWorkMemory }
]

const entry = (tenantId: string | null, iso: string, overrides: Partial<ConstructorParameters<typeof SecurityEvent>[0]> = {}) =>
  new SecurityEvent({
    id: randomUUID(),
    tenantId,
    at: DateTime.makeUnsafe(iso),
    actorSub: "operator:ops",
    actorEmail: "",
    action: "pat_revoked",
    target: randomUUID(),
    ip: "192.0.2.10",
    userAgent: "portfolio-cli/1.4.0",
    detail: { tokenPrefix: "ap_pat_abc", days: 30, holder: null },
    ...overrides
  })

describe.each(adapters)("SecurityLog contract: $name", ({ log: logLayer }) => {
  layer(logLayer, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("answers a tenant's entries as recorded, newest first then by id, from `since`, at most `limit`", () =>
      Effect.gen(function*() {
        const log = yield* SecurityLog
        const tenantId = randomUUID()
        const first = entry(tenantId, "2026-07-01T10:00:00.000Z")
        const second = entry(tenantId, "2026-07-01T11:00:00.000Z", { action: "sign_in", actorSub: null, actorEmail: "a@acme.test", target: null, detail: {} })
        // Two at one instant: the smaller id first.
        const [third, fourth] = [entry(tenantId, "2026-07-01T12:00:00.000Z"), entry(tenantId, "2026-07-01T12:00:00.000Z", { userAgent: "" })].sort((a, b) => a.id < b.id ? -1 : 1)
        yield* log.record(second)
        yield* log.record([fourth!, first, entry(randomUUID(), "2026-07-01T13:00:00.000Z"), third!])
        yield* log.record([])
        expect(yield* log.list(tenantId, { limit: 200 })).toEqual([third, fourth, second, first])
        expect(yield* log.list(tenantId, { since: second.at, limit: 200 })).toEqual([third, fourth, second])
        expect(yield* log.list(tenantId, { limit: 1 })).toEqual([third])
        expect(yield* log.list(tenantId, { since: DateTime.makeUnsafe("2026-07-01T12:00:00.001Z"), limit: 200 })).toEqual([])
        expect(yield* log.list(randomUUID(), { limit: 200 })).toEqual([])
      }))

    it.effect("orders ids as PostgreSQL orders uuids, whatever order they were recorded in", () =>
      Effect.gen(function*() {
        const log = yield* SecurityLog
        const tenantId = randomUUID()
        const ids = ["ffffffff-0000-4000-8000-000000000000", "0fffffff-0000-4000-8000-000000000000", "a0000000-0000-4000-8000-000000000000", "10000000-0000-4000-8000-000000000000"]
          .map((prefix) => `${prefix.slice(0, 24)}${randomUUID().slice(24)}`)
        yield* log.record(ids.map((id) => entry(tenantId, "2026-07-04T10:00:00.000Z", { id })))
        expect((yield* log.list(tenantId, { limit: 200 })).map((e) => e.id)).toEqual([...ids].sort())
      }))

    it.effect("keeps the entries of no tenant apart: only `null` lists them, and a tenant's list never does", () =>
      Effect.gen(function*() {
        const log = yield* SecurityLog
        const tenantId = randomUUID()
        const unknown = entry(null, "2026-07-03T10:00:00.000Z", { action: "sign_in_failed", actorSub: null, actorEmail: "nobody@x.test", target: null, detail: {} })
        const older = entry(null, "2026-07-03T09:00:00.000Z", { action: "sign_in_failed", actorSub: null, actorEmail: "nobody@x.test", target: null, detail: {} })
        const tenants = entry(tenantId, "2026-07-03T11:00:00.000Z")
        yield* log.record([older, tenants, unknown])
        const unattributed = yield* log.list(null, { since: DateTime.makeUnsafe("2026-07-03T00:00:00.000Z"), limit: 200 })
        expect(unattributed).toEqual([unknown, older])
        expect(yield* log.list(tenantId, { limit: 200 })).toEqual([tenants])
      }))

    it.effect("keeps what a unit of work records, one entry or many, once that work commits", () =>
      Effect.gen(function*() {
        const log = yield* SecurityLog
        const unitOfWork = yield* UnitOfWork
        const tenantId = randomUUID()
        const one = entry(tenantId, "2026-07-05T10:00:00.000Z")
        const many = [entry(tenantId, "2026-07-05T11:00:00.000Z"), entry(null, "2026-07-05T11:00:00.000Z")]
        yield* unitOfWork.run(Effect.andThen(log.record(one), log.record(many)))
        expect(yield* log.list(tenantId, { limit: 200 })).toEqual([many[0], one])
        expect(yield* log.list(null, { since: DateTime.makeUnsafe("2026-07-05T00:00:00.000Z"), limit: 200 })).toContainEqual(many[1])
      }))

    it.effect("keeps nothing of what a unit of work that fails recorded", () =>
      Effect.gen(function*() {
        const log = yield* SecurityLog
        const unitOfWork = yield* UnitOfWork
        const tenantId = randomUUID()
        const unattributed = entry(null, "2026-07-02T10:00:00.000Z")
        const failed = yield* Effect.flip(
          unitOfWork.run(
            Effect.andThen(log.record(entry(tenantId, "2026-07-02T09:00:00.000Z")), log.record([entry(tenantId, "2026-07-02T10:00:00.000Z"), unattributed])).pipe(
              Effect.andThen(Effect.fail("after the entries"))
            )
          )
        )
        expect(failed).toBe("after the entries")
        expect(yield* log.list(tenantId, { limit: 200 })).toEqual([])
        expect((yield* log.list(null, { since: unattributed.at, limit: 200 })).map((e) => e.id)).not.toContain(unattributed.id)
      }))
  })
})
