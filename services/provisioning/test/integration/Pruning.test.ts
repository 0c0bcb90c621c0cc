import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { pruneTables } from "@portfolio/platform/sql"
import { DayMs, FreshPgLive, printFigures, simulateRetention, spreadFrom } from "@portfolio/platform/testing"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { provisioningRetention } from "../../src/adapters/postgres/Pruning.js"

const Database = MigrationsLive.pipe(Layer.provideMerge(FreshPgLive("it_prov_pruning", 4)))
const defaults = provisioningRetention({ securityLog: 365 * DayMs, outbox: 7 * DayMs })
const now = new Date("2026-10-01T12:00:00.000Z")
const ago = (days: number) => new Date(now.getTime() - days * DayMs)
const tenantId = randomUUID()

const insertEntries = (at: ReadonlyArray<Date>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO provisioning.security_events (id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail)
        SELECT gen_random_uuid(), ${tenantId}, at::timestamptz, 'sub', 'admin@acme.test', 'member_invited', NULL, '192.0.2.1', '', '{}'::jsonb
        FROM json_array_elements_text(${JSON.stringify(at.map((d) => d.toISOString()))}::json) AS at`)

/** Outbox rows created at each time, published at once, or never when `published` is false. */
const insertOutbox = (at: ReadonlyArray<Date>, published = true) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO provisioning.outbox (id, subject, payload, created_at, published_at)
        SELECT gen_random_uuid(), 'events.provisioning.member.removed', '{}'::jsonb, at::timestamptz, CASE WHEN ${published} THEN at::timestamptz END
        FROM json_array_elements_text(${JSON.stringify(at.map((d) => d.toISOString()))}::json) AS at`)

const count = (table: string, where = "true") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)} WHERE ${sql.literal(where)}`.pipe(Effect.map((rows) => rows[0]!.n)))

layer(Database, { timeout: 120_000, excludeTestServices: true })("provisioning's retention on PostgreSQL", (it) => {
  it.effect("prunes the log after a year and published outbox rows after a week; an unpublished row stays however old", () =>
    Effect.gen(function*() {
      yield* insertEntries([ago(366), ago(400), ago(364), ago(0)])
      yield* insertOutbox([ago(8), ago(30), ago(6)])
      yield* insertOutbox([ago(30)], false)
      const outcome = yield* pruneTables(defaults, { now })
      expect(outcome.pruned).toEqual({ "provisioning.security_events": 2, "provisioning.outbox": 2 })
      expect(yield* count("provisioning.security_events")).toBe(2)
      expect(yield* count("provisioning.outbox", "published_at IS NULL")).toBe(1)
      expect(yield* count("provisioning.outbox", "published_at IS NOT NULL")).toBe(1)
    }))

  it.effect("measured: simulated days of traffic leave each table at its steady size once the longest period has passed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`TRUNCATE provisioning.security_events, provisioning.outbox`
      const EntriesPerDay = 20
      const EventsPerDay = 4
      const days = 365 + 7
      const figures = yield* simulateRetention({
        days,
        start: new Date("2025-06-01T00:00:00.000Z"),
        rules: defaults,
        tables: ["provisioning.security_events", "provisioning.outbox"],
        traffic: (_day, dayStart) => {
          const at = (hour: number) => new Date(dayStart.getTime() + hour * 3_600_000)
          return Effect.andThen(
            insertEntries(Array.from({ length: EntriesPerDay }, (_, i) => at(i))),
            insertOutbox(Array.from({ length: EventsPerDay }, (_, i) => at(i * 5)))
          )
        }
      })
      yield* printFigures("provisioning", figures, [1, 2, 7, 8, 9, 365, 366, 367, days])
      expect(spreadFrom(figures, "provisioning.outbox", 8)).toBe(0)
      expect(spreadFrom(figures, "provisioning.security_events", 366)).toBe(0)
      const last = figures.at(-1)!.rows
      expect(last["provisioning.outbox"]).toBe(7 * EventsPerDay)
      expect(last["provisioning.security_events"]).toBe(365 * EntriesPerDay)
    }))
})
