import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { SecurityEvent } from "@portfolio/domain"
import { DateTime, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { createSecurityEventsTable, migrationsLayer } from "../../src/sql/Migrations.js"
import { SecurityLog, securityLogPg } from "../../src/security/SecurityLog.js"
import { UnitOfWork, UnitOfWorkPg } from "../../src/sql/UnitOfWork.js"
import { FreshPgLive } from "../../testing/FreshDatabase.js"

// A service's schema of its own, with entries of no tenant allowed, as the console's.
const schema = "logged"
const Database = migrationsLayer(schema, { "0001_security_events": createSecurityEventsTable(schema, { tenant: "optional" }) }).pipe(
  Layer.provideMerge(FreshPgLive("it_security_log", 4))
)
const TestLive = Layer.mergeAll(securityLogPg(schema), UnitOfWorkPg).pipe(Layer.provideMerge(Database))

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

layer(TestLive, { timeout: 60_000, excludeTestServices: true })("securityLogPg: a service's security log in PostgreSQL", (it) => {
  it.effect("answers a tenant's entries as recorded, newest first then by id, from `since`, at most `limit`", () =>
    Effect.gen(function*() {
      const log = yield* SecurityLog
      const tenantId = randomUUID()
      const first = entry(tenantId, "2026-07-01T10:00:00.000Z")
      const second = entry(tenantId, "2026-07-01T11:00:00.000Z", { action: "sign_in", actorSub: null, actorEmail: "a@acme.test", target: null, detail: {} })
      // Two at one instant: the smaller id first.
      const [third, fourth] = [entry(tenantId, "2026-07-01T12:00:00.000Z"), entry(tenantId, "2026-07-01T12:00:00.000Z", { userAgent: "" })].sort((a, b) => a.id.localeCompare(b.id))
      yield* log.record(second)
      yield* log.record([fourth!, first, entry(randomUUID(), "2026-07-01T13:00:00.000Z"), third!])
      yield* log.record([])
      expect(yield* log.list(tenantId, { limit: 200 })).toEqual([third, fourth, second, first])
      expect(yield* log.list(tenantId, { since: second.at, limit: 200 })).toEqual([third, fourth, second])
      expect(yield* log.list(tenantId, { limit: 1 })).toEqual([third])
      expect(yield* log.list(randomUUID(), { limit: 200 })).toEqual([])
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

  it.effect("an entry recorded in a unit of work that fails is not kept", () =>
    Effect.gen(function*() {
      const log = yield* SecurityLog
      const unitOfWork = yield* UnitOfWork
      const sql = yield* SqlClient.SqlClient
      const tenantId = randomUUID()
      const failed = yield* Effect.flip(
        unitOfWork.run(Effect.andThen(log.record([entry(tenantId, "2026-07-02T10:00:00.000Z"), entry(null, "2026-07-02T10:00:00.000Z")]), Effect.fail("after the entries")))
      )
      expect(failed).toBe("after the entries")
      expect(yield* sql`SELECT id FROM ${sql(`${schema}.security_events`)} WHERE at = ${new Date("2026-07-02T10:00:00.000Z")}`).toEqual([])
      expect(yield* log.list(tenantId, { limit: 200 })).toEqual([])
    }))
})
