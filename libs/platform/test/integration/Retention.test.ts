import { SqlClient } from "effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Deferred, Effect, Result, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { createOutboxTable, indexPublishedOutbox, outboxRetention } from "../../src/nats/Outbox.js"
import { createSecurityEventsTable, indexSecurityEventsByTime, securityLogRetention } from "../../src/security/SecurityLog.js"
import { SchemaMigrationsLive } from "../../src/sql/Migrations.js"
import { parseRetention, pruneInBatches, pruneOnSchedule, pruneTables, type PruneRule, Retention } from "../../src/sql/Retention.js"
import { Metrics, MetricsLive } from "../../src/telemetry/Metrics.js"
import { FreshPgLive } from "../../testing/FreshDatabase.js"
import { parsePrometheusText, samplesOf } from "../../testing/PrometheusText.js"

const schema = "pruned"
const day = 86_400_000
const now = new Date("2026-09-30T12:00:00.000Z")
const daysAgo = (days: number) => new Date(now.getTime() - days * day)

// Items that may go once done, and notes naming them (pruned in the same statement), beside the
// platform's outbox and security log in their own shapes.
const Database = SchemaMigrationsLive(schema, {
  "0001_items": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      CREATE TABLE pruned.items (id uuid PRIMARY KEY, kind text NOT NULL, done boolean NOT NULL, at timestamptz NOT NULL);
      CREATE INDEX items_done_at ON pruned.items (at) WHERE done;
      CREATE TABLE pruned.notes (id uuid PRIMARY KEY, item_id uuid NOT NULL REFERENCES pruned.items (id) ON DELETE CASCADE);
      CREATE INDEX notes_item ON pruned.notes (item_id);
    `),
  "0002_outbox": createOutboxTable(schema),
  "0003_security_events": createSecurityEventsTable(schema, { tenant: "optional" }),
  "0004_retention_indexes": Effect.andThen(indexPublishedOutbox(schema), indexSecurityEventsByTime(schema))
}).pipe(Layer.provideMerge(FreshPgLive("it_retention", 6)), Layer.provideMerge(MetricsLive("retention-test")))

const itemsOf = (kind: string): PruneRule => ({
  table: "pruned.items",
  key: "id",
  keepFor: 30 * day,
  prunable: (sql, cutoff) => sql`done AND at < ${cutoff} AND kind = ${kind}`,
  with: [{ table: "pruned.notes", column: "item_id" }]
})

const insertItems = (kind: string, rows: ReadonlyArray<{ readonly done: boolean; readonly at: Date; readonly notes?: number }>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids: Array<string> = []
    for (const row of rows) {
      const id = randomUUID()
      ids.push(id)
      yield* sql`INSERT INTO pruned.items (id, kind, done, at) VALUES (${id}, ${kind}, ${row.done}, ${row.at})`
      for (let n = 0; n < (row.notes ?? 0); n++) yield* sql`INSERT INTO pruned.notes (id, item_id) VALUES (${randomUUID()}, ${id})`
    }
    return ids
  })

const remaining = (kind: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly id: string }>`SELECT id FROM pruned.items WHERE kind = ${kind}`.pipe(Effect.map((rows) => rows.map((r) => r.id).sort())))

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`.pipe(Effect.map((rows) => rows[0]!.n)))

describe("parseRetention", () => {
  const cases: ReadonlyArray<readonly [string, number | "forever" | "refused"]> = [
    ["30d", 30 * day], ["365d", 365 * day], ["12h", 12 * 3_600_000], ["90m", 90 * 60_000], [" 7d ", 7 * day], ["off", "forever"], ["OFF", "forever"],
    ["0d", "refused"], ["30", "refused"], ["30 days", "refused"], ["-1d", "refused"], ["1.5d", "refused"], ["", "refused"], ["10s", "refused"]
  ]
  for (const [text, expected] of cases) {
    it(`reads '${text}' as ${String(expected)}`, () => {
      const parsed = parseRetention(text)
      if (expected === "refused") expect(typeof parsed === "string" && parsed !== "forever").toBe(true)
      else expect(parsed).toBe(expected)
    })
  }
})

describe("the retention settings", () => {
  const read = <A>(config: Effect.Effect<A, unknown>, env: Record<string, string>) =>
    Effect.runSync(Effect.result(Effect.provide(config, ConfigProvider.layer(ConfigProvider.fromUnknown(env)))))

  it("default to the documented periods", () => {
    expect(read(Retention.deliveries, {})).toEqual(Result.succeed(30 * day))
    expect(read(Retention.securityLog, {})).toEqual(Result.succeed(365 * day))
    expect(read(Retention.outbox, {})).toEqual(Result.succeed(7 * day))
    expect(read(Retention.patRequests, {})).toEqual(Result.succeed(30 * day))
    expect(read(Retention.interval, {})).toEqual(Result.succeed(600_000))
  })

  it("refuse a bad value naming the variable, and deliveries kept less than a week", () => {
    const refusal = (config: Effect.Effect<unknown, unknown>, env: Record<string, string>) => {
      const result = read(config, env)
      return Result.isFailure(result) ? String(result.failure) : "accepted"
    }
    expect(refusal(Retention.securityLog, { RETENTION_SECURITY_LOG: "1 year" })).toContain("RETENTION_SECURITY_LOG")
    expect(refusal(Retention.deliveries, { RETENTION_DELIVERIES: "3d" })).toMatch(/RETENTION_DELIVERIES.*at least 7d/)
    expect(refusal(Retention.interval, { RETENTION_INTERVAL: "0m" })).toContain("RETENTION_INTERVAL")
    expect(read(Retention.deliveries, { RETENTION_DELIVERIES: "off" })).toEqual(Result.succeed("forever"))
  })
})

layer(Database, { timeout: 60_000, excludeTestServices: true })("pruneInBatches on PostgreSQL", (it) => {
  it.effect("deletes the prunable rows older than the cutoff with the rows naming them, and keeps the newer and the unfinished", () =>
    Effect.gen(function*() {
      const old = yield* insertItems("a", [{ done: true, at: daysAgo(31), notes: 2 }, { done: true, at: daysAgo(400), notes: 1 }])
      const kept = yield* insertItems("a", [
        { done: true, at: daysAgo(29), notes: 1 }, // newer than the cutoff
        { done: false, at: daysAgo(90), notes: 3 }, // old, but not finished
        { done: true, at: new Date(now.getTime() - 30 * day + 1) } // a millisecond inside the period
      ])
      const outcome = yield* pruneInBatches(itemsOf("a"), { now, batchSize: 100 })
      expect(outcome.pruned).toEqual({ "pruned.items": 2, "pruned.notes": 3 })
      expect(yield* remaining("a")).toEqual([...kept].sort())
      const sql = yield* SqlClient.SqlClient
      const notesLeft = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pruned.notes WHERE item_id IN ${sql.in([...old, ...kept])}`
      expect(notesLeft[0]!.n).toBe(4)
    }))

  it.effect("works in batches of the size given, until a batch deletes fewer", () =>
    Effect.gen(function*() {
      yield* insertItems("b", Array.from({ length: 10 }, (_, i) => ({ done: true, at: daysAgo(40 + i) })))
      const ten = yield* pruneInBatches(itemsOf("b"), { now, batchSize: 3 })
      expect(ten).toEqual({ pruned: { "pruned.items": 10, "pruned.notes": 0 }, batches: 4 }) // 3, 3, 3, 1
      yield* insertItems("b", Array.from({ length: 9 }, (_, i) => ({ done: true, at: daysAgo(40 + i) })))
      const nine = yield* pruneInBatches(itemsOf("b"), { now, batchSize: 3 })
      expect(nine).toEqual({ pruned: { "pruned.items": 9, "pruned.notes": 0 }, batches: 4 }) // 3, 3, 3, then 0 says it is over
      expect(yield* pruneInBatches(itemsOf("b"), { now, batchSize: 3 })).toEqual({ pruned: { "pruned.items": 0, "pruned.notes": 0 }, batches: 1 })
    }))

  it.effect("keeps everything, without a statement, when the rule keeps for ever", () =>
    Effect.gen(function*() {
      yield* insertItems("c", [{ done: true, at: daysAgo(4000) }])
      expect(yield* pruneInBatches({ ...itemsOf("c"), keepFor: "forever" }, { now })).toEqual({ pruned: { "pruned.items": 0, "pruned.notes": 0 }, batches: 0 })
      expect(yield* remaining("c")).toHaveLength(1)
    }))

  it.effect("two pruners at once delete each row once between them", () =>
    Effect.gen(function*() {
      yield* insertItems("d", Array.from({ length: 300 }, (_, i) => ({ done: true, at: daysAgo(31 + (i % 50)), notes: i % 2 })))
      const [first, second] = yield* Effect.all([pruneInBatches(itemsOf("d"), { now, batchSize: 7 }), pruneInBatches(itemsOf("d"), { now, batchSize: 7 })], {
        concurrency: 2
      })
      expect(first!.pruned["pruned.items"]! + second!.pruned["pruned.items"]!).toBe(300)
      expect(first!.pruned["pruned.notes"]! + second!.pruned["pruned.notes"]!).toBe(150)
      expect(yield* remaining("d")).toEqual([])
    }))

  it.effect("never waits for rows another transaction holds: it leaves them for its next pass", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const held = yield* insertItems("e", Array.from({ length: 5 }, () => ({ done: true, at: daysAgo(60) })))
      yield* insertItems("e", Array.from({ length: 20 }, () => ({ done: true, at: daysAgo(60) })))
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // A writer (or another replica's batch) holding five of them in an open transaction.
      const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT id FROM pruned.items WHERE id IN ${sql.in(held)} FOR UPDATE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })))
      yield* Deferred.await(locked)
      // Were it to wait for the held rows, this would not return before the holder lets go, which it
      // does only afterwards: the test would hang and fail.
      const meanwhile = yield* pruneInBatches(itemsOf("e"), { now, batchSize: 4 })
      expect(meanwhile.pruned["pruned.items"]).toBe(20)
      expect(yield* remaining("e")).toEqual([...held].sort())
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      expect((yield* pruneInBatches(itemsOf("e"), { now, batchSize: 4 })).pruned["pruned.items"]).toBe(5)
    }))

  it.effect("the outbox: published rows older than the period go; unpublished rows stay, however old", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const row = (createdDaysAgo: number, publishedDaysAgo: number | null) => {
        const id = randomUUID()
        return sql`INSERT INTO pruned.outbox (id, subject, payload, created_at, published_at)
                   VALUES (${id}, 'events.test.thing', '{}'::jsonb, ${daysAgo(createdDaysAgo)}, ${publishedDaysAgo === null ? null : daysAgo(publishedDaysAgo)})`.pipe(Effect.as(id))
      }
      yield* row(10, 9)
      yield* row(8, 8)
      const kept = [yield* row(6, 6), yield* row(30, null), yield* row(1, null), yield* row(9, 1)]
      const outcome = yield* pruneInBatches(outboxRetention(schema, 7 * day), { now, batchSize: 2 })
      expect(outcome.pruned).toEqual({ "pruned.outbox": 2 })
      const left = yield* sql<{ readonly id: string }>`SELECT id FROM pruned.outbox`
      expect(left.map((r) => r.id).sort()).toEqual([...kept].sort())
    }))

  it.effect("a security log: entries older than the period go, of every tenant and of none", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const entry = (tenantId: string | null, at: Date) =>
        sql`INSERT INTO pruned.security_events (id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail)
            VALUES (${randomUUID()}, ${tenantId}, ${at}, null, 'a@acme.test', 'sign_in', null, '192.0.2.1', '', '{}'::jsonb)`
      yield* entry(randomUUID(), daysAgo(366))
      yield* entry(null, daysAgo(500))
      yield* entry(randomUUID(), daysAgo(364))
      yield* entry(null, daysAgo(1))
      const outcome = yield* pruneInBatches(securityLogRetention(schema, 365 * day), { now })
      expect(outcome.pruned).toEqual({ "pruned.security_events": 2 })
      expect(yield* count("pruned.security_events")).toBe(2)
    }))

  it.effect("a pass counts what it deleted in portfolio_retention_pruned_rows_total, by table", () =>
    Effect.gen(function*() {
      yield* insertItems("f", [{ done: true, at: daysAgo(45), notes: 2 }, { done: true, at: daysAgo(46) }, { done: true, at: daysAgo(2) }])
      const outcome = yield* pruneTables([itemsOf("f")], { now })
      expect(outcome.pruned).toEqual({ "pruned.items": 2, "pruned.notes": 2 })
      const families = parsePrometheusText(yield* Effect.flatMap(Metrics, (metrics) => metrics.exposition))
      const family = families.get("portfolio_retention_pruned_rows_total")
      expect(family?.type).toBe("counter")
      // Earlier tests of this file called pruneInBatches alone, which records nothing.
      expect(samplesOf(families, "portfolio_retention_pruned_rows_total", { db_collection_name: "pruned.items" })[0]?.value).toBe(2)
      expect(samplesOf(families, "portfolio_retention_pruned_rows_total", { db_collection_name: "pruned.notes" })[0]?.value).toBe(2)
    }))

  it.effect("on its schedule: every table's series at 0 from the start, then a pass a minute after start, on the clock", () =>
    Effect.gen(function*() {
      yield* insertItems("g", [{ done: true, at: new Date(Date.now() - 45 * day) }])
      const scheduled: PruneRule = { ...itemsOf("g"), with: [] }
      const valueOf = (table: string) =>
        Effect.map(Effect.flatMap(Metrics, (metrics) => metrics.exposition), (text) =>
          samplesOf(parsePrometheusText(text), "portfolio_retention_pruned_rows_total", { db_collection_name: table })[0]?.value)
      const before = yield* valueOf("pruned.items")
      yield* Effect.gen(function*() {
        // The test clock starts at 1970: today, so that the row is 45 days old for the pass too.
        yield* TestClock.setTime(Date.now())
        // The outbox's rule was only ever run alone here, which records nothing: no series yet.
        expect(yield* valueOf("pruned.outbox")).toBeUndefined()
        yield* Layer.build(pruneOnSchedule(Effect.succeed([scheduled, outboxRetention(schema, "forever")])))
        // Declared, not yet run: the series are there, unchanged or at 0.
        expect(yield* valueOf("pruned.items")).toBe(before ?? 0)
        expect(yield* valueOf("pruned.outbox")).toBe(0)
        expect(yield* remaining("g")).toHaveLength(1)
        yield* TestClock.adjust("61 seconds")
        // The pass runs on its fiber: wait for its whole effect, the row's deletion and then its
        // count, inside the scope (closing it interrupts the pass; a CI once saw the deletion and
        // not yet the count). Bounded (a query each time, no clock), so that a pass that never
        // comes fails below.
        const counted = (before ?? 0) + 1
        yield* Effect.all([remaining("g"), valueOf("pruned.items")]).pipe(
          Effect.repeat({ until: ([left, value]) => left.length === 0 && value === counted, times: 2_000 })
        )
      }).pipe(Effect.scoped, Effect.provide(TestClock.layer()))
      expect(yield* remaining("g")).toHaveLength(0)
      expect(yield* valueOf("pruned.items")).toBe((before ?? 0) + 1)
    }))

  it.effect("a rule whose statement fails fails the pass (a defect of the declaration, not a silent skip)", () =>
    Effect.gen(function*() {
      const broken: PruneRule = { table: "pruned.missing", key: "id", keepFor: day, prunable: (sql, cutoff) => sql`at < ${cutoff}` }
      const result = yield* Effect.result(pruneTables([broken], { now }))
      expect(Result.isFailure(result)).toBe(true)
    }))
})
