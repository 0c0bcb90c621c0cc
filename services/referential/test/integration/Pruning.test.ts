import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { pruneTables } from "@portfolio/platform/sql"
import { DayMs, FreshPgLive, printFigures, simulateRetention, spreadFrom } from "@portfolio/platform/testing"
import { Effect, Layer } from "effect"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { referentialRetention } from "../../src/adapters/postgres/Pruning.js"

const Database = MigrationsLive.pipe(Layer.provideMerge(FreshPgLive("it_ref_pruning", 4)))
const defaults = referentialRetention({ outbox: 7 * DayMs })
const now = new Date("2026-10-01T12:00:00.000Z")
const ago = (days: number) => new Date(now.getTime() - days * DayMs)

/** Outbox rows created at each time, published a second later, or never when `published` is false. */
const insertOutbox = (at: ReadonlyArray<Date>, published = true) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO referential.outbox (id, subject, payload, created_at, published_at)
        SELECT gen_random_uuid(), 'events.referential.application.updated', '{}'::jsonb, at::timestamptz,
          CASE WHEN ${published} THEN at::timestamptz + interval '1 second' END
        FROM json_array_elements_text(${JSON.stringify(at.map((d) => d.toISOString()))}::json) AS at`)

const count = (where: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM referential.outbox WHERE ${sql.literal(where)}`.pipe(Effect.map((rows) => rows[0]!.n)))

layer(Database, { timeout: 120_000, excludeTestServices: true })("the referential's retention on PostgreSQL", (it) => {
  it.effect("prunes outbox rows published over a week ago; a row the relay still owes the broker stays however old", () =>
    Effect.gen(function*() {
      yield* insertOutbox([ago(8), ago(100), ago(6), ago(0)])
      yield* insertOutbox([ago(100), ago(1)], false)
      const outcome = yield* pruneTables(defaults, { now, batchSize: 1 })
      expect(outcome).toEqual({ pruned: { "referential.outbox": 2 }, batches: 3 })
      expect(yield* count("published_at IS NULL")).toBe(2)
      expect(yield* count("published_at IS NOT NULL")).toBe(2)
    }))

  it.effect("measured: simulated days of traffic leave the outbox at its steady size once a week has passed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`TRUNCATE referential.outbox`
      const EventsPerDay = 500
      const days = 7 + 7
      const figures = yield* simulateRetention({
        days,
        start: new Date("2026-03-01T00:00:00.000Z"),
        rules: defaults,
        tables: ["referential.outbox"],
        traffic: (_day, dayStart) =>
          insertOutbox(Array.from({ length: EventsPerDay }, (_, i) => new Date(dayStart.getTime() + i * 172_000)))
      })
      yield* printFigures("referential", figures, Array.from({ length: days }, (_, i) => i + 1))
      expect(spreadFrom(figures, "referential.outbox", 8)).toBe(0)
      expect(figures.at(-1)!.rows["referential.outbox"]).toBe(7 * EventsPerDay)
    }))
})
