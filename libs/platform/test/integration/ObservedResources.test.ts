import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, References, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { Metrics, MetricsLive } from "../../src/telemetry/Metrics.js"
import { SchemaMigrationsLive } from "../../src/sql/Migrations.js"
import { NatsSettings, plainNats } from "../../src/nats/Nats.js"
import { appendToOutbox, createOutboxTable, EventPublisherJs, OutboxRelayLive } from "../../src/nats/Outbox.js"
import { FreshPgLive } from "../../testing/FreshDatabase.js"
import { parsePrometheusText, samplesOf } from "../../testing/PrometheusText.js"

const scraped = Effect.map(Effect.flatMap(Metrics, (metrics) => metrics.exposition), parsePrometheusText)
const valueOf = (name: string, labels: Record<string, string> = {}) => Effect.map(scraped, (families) => samplesOf(families, name, labels)[0]?.value)

/** Reads again, every 20 ms, until `done` holds (the queries run meanwhile). */
const until = <A>(done: (a: A) => boolean) => (read: Effect.Effect<A>) =>
  read.pipe(Effect.filterOrFail(done), Effect.retry(Schedule.spaced("20 millis")), Effect.timeout("5 seconds"), Effect.orDie)

// A pool of two, so that two transactions hold all of it.
const Pool = FreshPgLive("it_observed_pool", 2).pipe(Layer.provideMerge(MetricsLive("observed")))

describe("the pool's metrics", () => {
  layer(Pool, { timeout: 30_000, excludeTestServices: true })((it) => {
    it.effect("counts the connections in use, idle, at most, and the requests waiting for one", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pool = { db_client_connection_pool_name: "portfolio" }
        expect(yield* valueOf("db_client_connection_max", pool)).toBe(2)

        const release = yield* Deferred.make<void>()
        const held = Effect.gen(function*() {
          yield* sql`SELECT 1`
          yield* Deferred.await(release)
        }).pipe(sql.withTransaction)
        const holders = yield* Effect.all([held, held], { concurrency: 2 }).pipe(Effect.forkChild)
        yield* valueOf("db_client_connection_count", { ...pool, db_client_connection_state: "used" }).pipe(until((used) => used === 2))
        const waiting = yield* Effect.forkChild(sql`SELECT 1`)
        yield* valueOf("db_client_connection_pending_requests", pool).pipe(until((pending) => pending === 1))
        expect(yield* valueOf("db_client_connection_count", { ...pool, db_client_connection_state: "idle" })).toBe(0)

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holders)
        yield* Fiber.join(waiting)
        expect(yield* valueOf("db_client_connection_pending_requests", pool)).toBe(0)
        expect(yield* valueOf("db_client_connection_count", { ...pool, db_client_connection_state: "used" })).toBe(0)
        expect(yield* valueOf("db_client_connection_count", { ...pool, db_client_connection_state: "idle" })).toBe(2)
      }))
  })
})

const schema = "observed"
// Nothing listens on port 1: the relay cannot publish, as when NATS is down, and the backlog stays.
const Stuck = OutboxRelayLive(schema, EventPublisherJs("observed-test").pipe(Layer.provide(Layer.succeed(NatsSettings, plainNats("nats://127.0.0.1:1"))))).pipe(
  Layer.provideMerge(SchemaMigrationsLive(schema, { "0001_outbox": createOutboxTable(schema) })),
  Layer.provideMerge(FreshPgLive("it_observed_outbox", 4)),
  Layer.provideMerge(MetricsLive("observed")),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
)

describe("the outbox's metrics", () => {
  layer(Stuck, { timeout: 30_000, excludeTestServices: true })((it) => {
    it.effect("reports the events the relay could not publish and how long the oldest has waited", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const event = () => ({ id: randomUUID(), subject: "events.observed.thing.happened", payload: { n: 1 } })
        yield* appendToOutbox(schema, [event(), event(), event()]).pipe(sql.withTransaction)
        yield* Effect.sleep("300 millis")
        expect(yield* valueOf("portfolio_outbox_backlog")).toBe(3)
        const age = yield* valueOf("portfolio_outbox_oldest_age_seconds")
        expect(age).toBeGreaterThanOrEqual(0.3)
        expect(age).toBeLessThan(10)
      }))
  })
})
