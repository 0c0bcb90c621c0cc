import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { DayMs, FreshPgLive, printFigures, simulateRetention, spreadFrom } from "@portfolio/platform/testing"
import { pruneTables } from "@portfolio/platform/sql"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { dispatcherRetention } from "../../src/adapters/postgres/Pruning.js"

const Database = MigrationsLive.pipe(Layer.provideMerge(FreshPgLive("it_hooks_pruning", 4)))

const defaults = dispatcherRetention({ deliveries: 30 * DayMs, outbox: 7 * DayMs })
const now = new Date("2026-10-01T00:00:00.000Z")
const ago = (days: number) => new Date(now.getTime() - days * DayMs)

const subscription = (state: "enabled" | "disabled") =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    // Sealing plays no part here: any bytes will do.
    yield* sql`INSERT INTO webhook_dispatcher.subscriptions (id, tenant_id, url, description, state, disabled_reason, sealed_secret, created_at, updated_at)
               VALUES (${id}, ${randomUUID()}, 'https://hooks.example.test/in', '', ${state}, ${state === "disabled" ? "consecutive_failures" : null},
                       '\\x00'::bytea, ${ago(400)}, ${ago(400)})`
    return id
  })

const event = (receivedDaysAgo: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    yield* sql`INSERT INTO webhook_dispatcher.events (id, tenant_id, type, body, created_at, received_at)
               VALUES (${id}, ${randomUUID()}, 'application.created', '{}', ${ago(receivedDaysAgo)}, ${ago(receivedDaysAgo)})`
    return id
  })

type Outcome = "succeeded" | "attempts_exhausted" | "subscription_disabled" | "pending"

/** A delivery last changed `changedDaysAgo`, with `attempts` attempts. */
const delivery = (eventId: string, subscriptionId: string, outcome: Outcome, changedDaysAgo: number, attempts: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    const status = outcome === "succeeded" ? "succeeded" : outcome === "pending" ? "pending" : "failed"
    const reason = status === "failed" ? outcome : null
    yield* sql`INSERT INTO webhook_dispatcher.deliveries (id, event_id, subscription_id, status, failure_reason, attempts, next_attempt_at, created_at, updated_at)
               VALUES (${id}, ${eventId}, ${subscriptionId}, ${status}, ${reason}, ${attempts}, ${status === "pending" ? ago(changedDaysAgo - 1) : null},
                       ${ago(changedDaysAgo + 3)}, ${ago(changedDaysAgo)})`
    for (let n = 1; n <= attempts; n++) {
      yield* sql`INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, response_body)
                 VALUES (${randomUUID()}, ${id}, ${n}, ${ago(changedDaysAgo)}, 12, 500, '')`
    }
    return id
  })

const ids = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly id: string }>`SELECT id FROM ${sql(table)}`.pipe(Effect.map((rows) => rows.map((r) => r.id).sort())))

const attemptsOf = (deliveryId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM webhook_dispatcher.attempts WHERE delivery_id = ${deliveryId}`.pipe(Effect.map((rows) => rows[0]!.n)))

layer(Database, { timeout: 120_000, excludeTestServices: true })("the dispatcher's retention on PostgreSQL", (it) => {
  it.effect("prunes finished deliveries with their attempts, then events no delivery names, then published outbox rows; keeps what the rule keeps", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const enabled = yield* subscription("enabled")
      const disabled = yield* subscription("disabled")
      const oldEvent = yield* event(40)
      const sharedEvent = yield* event(40)
      const lonelyOld = yield* event(35) // its deliveries went with a deleted subscription
      const lonelyNew = yield* event(2)

      const succeededOld = yield* delivery(oldEvent, enabled, "succeeded", 31, 2)
      const exhaustedOld = yield* delivery(sharedEvent, enabled, "attempts_exhausted", 32, 7)
      const succeededNew = yield* delivery(yield* event(29), enabled, "succeeded", 29, 1)
      // Retrying for a long time (a redelivery restarted its schedule): never pruned, nor its attempts.
      const pendingOld = yield* delivery(yield* event(60), enabled, "pending", 45, 3)
      // The disabled subscription's failures wait for `recover`; its successes are history like any.
      const waitingForRecover = yield* delivery(sharedEvent, disabled, "subscription_disabled", 90, 10)
      const exhaustedOfDisabled = yield* delivery(yield* event(90), disabled, "attempts_exhausted", 90, 7)
      yield* delivery(oldEvent, disabled, "succeeded", 90, 1)

      const outbox = (publishedDaysAgo: number | null, createdDaysAgo: number) =>
        Effect.gen(function*() {
          const id = randomUUID()
          yield* sql`INSERT INTO webhook_dispatcher.outbox (id, subject, payload, created_at, published_at)
                     VALUES (${id}, 'events.webhook-dispatcher.subscription.disabled', '{}'::jsonb, ${ago(createdDaysAgo)},
                             ${publishedDaysAgo === null ? null : ago(publishedDaysAgo)})`
          return id
        })
      yield* outbox(8, 8)
      const outboxKept = [yield* outbox(6, 6), yield* outbox(null, 20)]

      const eventsBefore = yield* ids("webhook_dispatcher.events")
      const outcome = yield* pruneTables(defaults, { now, batchSize: 2 })
      expect(outcome.pruned).toEqual({
        "webhook_dispatcher.deliveries": 3, // succeededOld, exhaustedOld, succeededOfDisabled
        "webhook_dispatcher.attempts": 10,
        "webhook_dispatcher.events": 2, // oldEvent (both its deliveries gone) and lonelyOld
        "webhook_dispatcher.outbox": 1
      })
      expect(yield* ids("webhook_dispatcher.deliveries")).toEqual([succeededNew, pendingOld, waitingForRecover, exhaustedOfDisabled].sort())
      expect(yield* attemptsOf(pendingOld)).toBe(3)
      expect(yield* attemptsOf(waitingForRecover)).toBe(10)
      expect(yield* attemptsOf(succeededOld)).toBe(0)
      expect(yield* attemptsOf(exhaustedOld)).toBe(0)
      // sharedEvent stays: a kept delivery names it.
      expect(yield* ids("webhook_dispatcher.events")).toEqual(eventsBefore.filter((id) => id !== oldEvent && id !== lonelyOld))
      expect((yield* ids("webhook_dispatcher.events")).includes(lonelyNew)).toBe(true)
      expect(yield* ids("webhook_dispatcher.outbox")).toEqual([...outboxKept].sort())

      // Enabled again, the subscription's failures age like any other delivery's.
      yield* sql`UPDATE webhook_dispatcher.subscriptions SET state = 'enabled', disabled_reason = NULL WHERE id = ${disabled}`
      const again = yield* pruneTables(defaults, { now })
      expect(again.pruned["webhook_dispatcher.deliveries"]).toBe(2)
      expect(yield* ids("webhook_dispatcher.deliveries")).toEqual([succeededNew, pendingOld].sort())
    }))

  it.effect("measured: simulated days of traffic leave each table at its steady size once the longest period has passed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`TRUNCATE webhook_dispatcher.attempts, webhook_dispatcher.deliveries, webhook_dispatcher.events, webhook_dispatcher.outbox`
      const subscriptions = [yield* subscription("enabled"), yield* subscription("enabled")]
      const EventsPerDay = 120
      // 210 succeeding at once, 6 failing 7 times, 24 failing once then succeeding: 210 + 42 + 48.
      const AttemptsPerDay = 300
      const tables = ["webhook_dispatcher.deliveries", "webhook_dispatcher.attempts", "webhook_dispatcher.events", "webhook_dispatcher.outbox"]
      const days = 30 + 7 + 3
      // Each day: 120 events to both subscriptions; one delivery in ten fails once, then succeeds
      // after its retry the next day (pending overnight, so never pruned while it waits); one in
      // forty fails for good with 7 attempts; one subscription-disabled event a day in the outbox.
      const figures = yield* simulateRetention({
        days,
        start: new Date("2026-01-01T00:00:00.000Z"),
        rules: defaults,
        tables,
        traffic: (_day, dayStart) =>
          Effect.gen(function*() {
            const at = (minute: number) => new Date(dayStart.getTime() + minute * 60_000)
            yield* sql`UPDATE webhook_dispatcher.deliveries SET status = 'succeeded', next_attempt_at = NULL, attempts = 2, updated_at = ${at(60)}
                       WHERE status = 'pending'`
            const rows = Array.from({ length: EventsPerDay }, (_, i) => ({ id: randomUUID(), at: at(i * 10) }))
            yield* sql`INSERT INTO webhook_dispatcher.events (id, tenant_id, type, body, created_at, received_at)
                       SELECT id, ${randomUUID()}, 'application.created', '{"data":{}}', at, at
                       FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(id uuid, at timestamptz)`
            const deliveries = rows.flatMap((event, i) =>
              subscriptions.map((subscriptionId, s) => {
                const n = i * 2 + s
                const kind = n % 40 === 7 ? "failed" : n % 10 === 3 ? "retrying" : "succeeded"
                return { id: randomUUID(), eventId: event.id, subscriptionId, at: event.at, kind, attempts: kind === "failed" ? 7 : 1 }
              }))
            yield* sql`INSERT INTO webhook_dispatcher.deliveries (id, event_id, subscription_id, status, failure_reason, attempts, next_attempt_at, created_at, updated_at)
                       SELECT id, "eventId", "subscriptionId",
                         CASE kind WHEN 'failed' THEN 'failed' WHEN 'retrying' THEN 'pending' ELSE 'succeeded' END,
                         CASE kind WHEN 'failed' THEN 'attempts_exhausted' END, attempts,
                         CASE kind WHEN 'retrying' THEN at + interval '1 day' END, at, at
                       FROM json_to_recordset(${JSON.stringify(deliveries)}::json)
                         AS d(id uuid, "eventId" uuid, "subscriptionId" uuid, at timestamptz, kind text, attempts int)`.withoutTransform
            yield* sql`INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, response_body)
                       SELECT gen_random_uuid(), d.id, n, d.created_at, 20, 200, '' FROM webhook_dispatcher.deliveries d, generate_series(1, d.attempts) n
                       WHERE d.created_at >= ${dayStart}`
            yield* sql`INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, response_body)
                       SELECT gen_random_uuid(), d.id, 2, d.updated_at, 20, 200, '' FROM webhook_dispatcher.deliveries d
                       WHERE d.updated_at = ${at(60)} AND d.attempts = 2`
            yield* sql`INSERT INTO webhook_dispatcher.outbox (id, subject, payload, created_at, published_at)
                       VALUES (${randomUUID()}, 'events.webhook-dispatcher.subscription.disabled', '{}'::jsonb, ${at(5)}, ${at(5)})`
          })
      })
      yield* printFigures("webhook-dispatcher", figures, [1, 2, 7, 8, 14, 29, 30, 31, 32, 33, 37, days])
      // Deliveries, attempts and events are kept 30 days after they last changed, the outbox 7: from
      // the day after each period on, a day's pruning takes exactly what a day brings.
      for (const table of ["webhook_dispatcher.deliveries", "webhook_dispatcher.attempts", "webhook_dispatcher.events"]) {
        expect(spreadFrom(figures, table, 31), table).toBe(0)
      }
      expect(spreadFrom(figures, "webhook_dispatcher.outbox", 8)).toBe(0)
      // The steady sizes: 30 days of traffic, and the 24 deliveries of the 31st day back that
      // finished on the 30th after their retry (with their events and first attempts).
      const Retried = 24
      const last = figures.at(-1)!.rows
      expect(last["webhook_dispatcher.deliveries"]).toBe(30 * EventsPerDay * 2 + Retried)
      expect(last["webhook_dispatcher.attempts"]).toBe(30 * AttemptsPerDay + Retried)
      expect(last["webhook_dispatcher.events"]).toBe(30 * EventsPerDay + Retried)
      expect(last["webhook_dispatcher.outbox"]).toBe(7)
      expect(figures.at(-1)!.pruned["webhook_dispatcher.deliveries"]).toBe(EventsPerDay * 2)
    }))
})
