import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { pruneTables } from "@portfolio/platform/sql"
import { DayMs, FreshPgLive, printFigures, simulateRetention, spreadFrom } from "@portfolio/platform/testing"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { consoleRetention } from "../../src/adapters/postgres/Pruning.js"

const Database = MigrationsLive.pipe(Layer.provideMerge(FreshPgLive("it_console_pruning", 4)))
const minute = 60_000
// The defaults: sessions idle 30 minutes, lockout window 15 minutes, the log a year.
const policies = {
  session: { absoluteMs: 8 * 60 * minute, idleMs: 30 * minute },
  lockout: { maxFailuresPerEmail: 5, maxFailuresPerAddress: 50, windowMs: 15 * minute }
}
const defaults = consoleRetention(policies, { securityLog: 365 * DayMs })
const now = new Date("2026-10-01T12:00:00.000Z")
const ago = (ms: number) => new Date(now.getTime() - ms)

const insertSessions = (lastSeen: ReadonlyArray<Date>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO console.sessions (id_hash, user_sub, email, tenant_id, csrf_token, created_at, last_seen_at, ip, user_agent)
        SELECT md5(random()::text || at), 'sub', 'a@acme.test', NULL, 'csrf', at::timestamptz - interval '1 hour', at::timestamptz, '192.0.2.1', ''
        FROM json_array_elements_text(${JSON.stringify(lastSeen.map((d) => d.toISOString()))}::json) AS at`)

const insertAttempts = (at: ReadonlyArray<Date>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO console.sign_in_attempts (id, email_key, ip, at)
        SELECT gen_random_uuid(), 'a@acme.test', '192.0.2.1', at::timestamptz
        FROM json_array_elements_text(${JSON.stringify(at.map((d) => d.toISOString()))}::json) AS at`)

const insertEntries = (at: ReadonlyArray<Date>, tenantId: string | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO console.security_events (id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail)
        SELECT gen_random_uuid(), ${tenantId}, at::timestamptz, NULL, 'a@acme.test', 'sign_in_failed', NULL, '192.0.2.1', '', '{}'::jsonb
        FROM json_array_elements_text(${JSON.stringify(at.map((d) => d.toISOString()))}::json) AS at`)

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`.pipe(Effect.map((rows) => rows[0]!.n)))

layer(Database, { timeout: 120_000, excludeTestServices: true })("the console's retention on PostgreSQL", (it) => {
  it.effect("prunes idle sessions, attempts the lockout no longer counts and a year-old log; keeps what may still count", () =>
    Effect.gen(function*() {
      yield* insertSessions([ago(31 * minute), ago(3 * DayMs), ago(29 * minute), ago(minute)])
      yield* insertAttempts([ago(16 * minute), ago(DayMs), ago(14 * minute), ago(0)])
      yield* insertEntries([ago(366 * DayMs), ago(2 * 365 * DayMs)], null)
      yield* insertEntries([ago(364 * DayMs), ago(DayMs)], randomUUID())
      const outcome = yield* pruneTables(defaults, { now, batchSize: 1 })
      expect(outcome.pruned).toEqual({ "console.sessions": 2, "console.sign_in_attempts": 2, "console.security_events": 2 })
      expect(yield* count("console.sessions")).toBe(2)
      expect(yield* count("console.sign_in_attempts")).toBe(2)
      expect(yield* count("console.security_events")).toBe(2)
    }))

  it.effect("measured: simulated days of traffic leave each table at its steady size once the longest period has passed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`TRUNCATE console.sessions, console.sign_in_attempts, console.security_events`
      const SessionsPerDay = 100
      const EntriesPerDay = 80
      const days = 365 + 7
      const tenantId = randomUUID()
      // Each day: 100 sign-ins, their sessions last seen through the day (the last two within the
      // idle limit of the day's end); 30 failed attempts, the last within the lockout window; 80
      // log entries, a quarter of them of no tenant (failed sign-ins of unknown e-mails).
      const figures = yield* simulateRetention({
        days,
        start: new Date("2025-06-01T00:00:00.000Z"),
        rules: defaults,
        tables: ["console.sessions", "console.sign_in_attempts", "console.security_events"],
        traffic: (_day, dayStart) => {
          const at = (minutes: number) => new Date(dayStart.getTime() + minutes * minute).toISOString()
          const day = {
            sessions: Array.from({ length: SessionsPerDay }, (_, i) => at(i * 14.4)),
            attempts: Array.from({ length: 30 }, (_, i) => at(i * 49.5)),
            entries: Array.from({ length: EntriesPerDay * 3 / 4 }, (_, i) => at(i * 17)),
            unattributed: Array.from({ length: EntriesPerDay / 4 }, (_, i) => at(i * 50))
          }
          // A day in one statement: a year of days runs in seconds rather than a minute.
          return sql`
            WITH day AS (SELECT ${JSON.stringify(day)}::jsonb AS d),
            s AS (
              INSERT INTO console.sessions (id_hash, user_sub, email, tenant_id, csrf_token, created_at, last_seen_at, ip, user_agent)
              SELECT md5(random()::text || at), 'sub', 'a@acme.test', NULL, 'csrf', at::timestamptz - interval '1 hour', at::timestamptz, '192.0.2.1', ''
              FROM day, jsonb_array_elements_text(d -> 'sessions') AS at
            ), a AS (
              INSERT INTO console.sign_in_attempts (id, email_key, ip, at)
              SELECT gen_random_uuid(), 'a@acme.test', '192.0.2.1', at::timestamptz FROM day, jsonb_array_elements_text(d -> 'attempts') AS at
            ), e AS (
              INSERT INTO console.security_events (id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail)
              SELECT gen_random_uuid(), CASE WHEN kind = 'entries' THEN ${tenantId}::uuid END, at::timestamptz, NULL, 'a@acme.test', 'sign_in_failed',
                NULL, '192.0.2.1', '', '{}'::jsonb
              FROM day, (VALUES ('entries'), ('unattributed')) AS k(kind), jsonb_array_elements_text(d -> kind) AS at
            )
            SELECT 1`.withoutTransform
        }
      })
      yield* printFigures("console", figures, [1, 2, 7, 8, 365, 366, 367, days])
      expect(spreadFrom(figures, "console.sessions", 1)).toBe(0)
      expect(spreadFrom(figures, "console.sign_in_attempts", 1)).toBe(0)
      expect(spreadFrom(figures, "console.security_events", 366)).toBe(0)
      const last = figures.at(-1)!.rows
      expect(last["console.sessions"]).toBe(2) // seen at 23:31 and 23:45
      expect(last["console.sign_in_attempts"]).toBe(1) // at 23:55:30
      expect(last["console.security_events"]).toBe(365 * EntriesPerDay)
    }))
})
