import { SqlClient, SqlError } from "effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Result, Schedule, Stream } from "effect"
import { isUniqueViolation, listenTo, pgError, PgClient } from "../../src/sql/Database.js"
import { FreshPgLive } from "../../testing/FreshDatabase.js"

// The platform's own effect/sql client over node-postgres (Database.ts), against a real
// PostgreSQL: what the services' SQL relies on, as @effect/sql-pg 0.53 gave it.

const reasonOf = (error: unknown) => (SqlError.isSqlError(error) ? error.reason._tag : "not a SqlError")

layer(FreshPgLive("it_pg_client", 4), { timeout: 60_000, excludeTestServices: true })("the PostgreSQL client", (it) => {
  it.effect("reads int8 and count(*) as numbers, numeric as text, and names columns in camel case", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT 9007199254740991::int8 AS amount_minor, count(*) AS row_count, 1.50::numeric AS unit_price FROM (VALUES (1), (2)) AS v (n)`
      expect(rows).toEqual([{ amountMinor: 9007199254740991, rowCount: 2, unitPrice: "1.50" }])
      const exit = yield* Effect.exit(sql`SELECT 9007199254740993::int8 AS too_big`)
      expect(exit._tag).toBe("Failure")
      expect(yield* sql.withoutTransforms()`SELECT 1 AS snake_case`).toEqual([{ snake_case: 1 }])
    }))

  it.effect("writes camel-case names snake case, with $n placeholders for insert, in, csv and update", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE things (id int PRIMARY KEY, display_name text NOT NULL, tags jsonb)`
      const insert = sql`INSERT INTO things ${sql.insert([{ id: 1, displayName: "one", tags: JSON.stringify(["a"]) }, { id: 2, displayName: "two", tags: null }])}`
      expect(insert.compile()).toEqual([`INSERT INTO things ("id","display_name","tags") VALUES ($1,$2,$3),($4,$5,$6)`, [1, "one", `["a"]`, 2, "two", null]])
      yield* insert
      yield* sql`INSERT INTO things (id, display_name) VALUES ${sql.csv([sql`(${3}, ${"three"})`, sql`(${4}, ${"four"})`])}`
      yield* sql`UPDATE things SET ${sql.update({ displayName: "TWO" })} WHERE id = ${2}`
      const picked = yield* sql<{ readonly id: number; readonly displayName: string; readonly tags: unknown }>`
        SELECT id, display_name, tags FROM ${sql("things")} WHERE ${sql("id")} IN ${sql.in([1, 2, 4])} ORDER BY id`
      expect(picked).toEqual([{ id: 1, displayName: "one", tags: ["a"] }, { id: 2, displayName: "TWO", tags: null }, { id: 4, displayName: "four", tags: null }])
    }))

  it.effect("commits a transaction, rolls back a failed one, and a failed nested one to its savepoint only", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE ledger (n int PRIMARY KEY)`
      const add = (n: number) => sql`INSERT INTO ledger (n) VALUES (${n})`
      yield* sql.withTransaction(add(1))
      yield* Effect.flip(sql.withTransaction(Effect.andThen(add(2), Effect.fail("refused"))))
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* add(3)
        yield* Effect.flip(sql.withTransaction(Effect.andThen(add(4), Effect.fail("refused"))))
        yield* sql.withTransaction(add(5))
      }))
      expect((yield* sql<{ readonly n: number }>`SELECT n FROM ledger ORDER BY n`).map((row) => row.n)).toEqual([1, 3, 5])
    }))

  it.effect("runs a transaction's statements on one connection", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pids = yield* sql.withTransaction(Effect.all([sql`SELECT pg_backend_pid() AS pid`, sql`SELECT pg_backend_pid() AS pid`], { concurrency: 2 }))
      expect(pids[0]).toEqual(pids[1])
    }))

  it.effect("names the unique constraint a statement broke", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE slugs (slug text CONSTRAINT slugs_slug_key UNIQUE)`
      yield* sql`INSERT INTO slugs (slug) VALUES (${"a"})`
      const error = yield* Effect.flip(sql`INSERT INTO slugs (slug) VALUES (${"a"})`)
      expect(reasonOf(error)).toBe("UniqueViolation")
      expect(isUniqueViolation(error)).toBe(true)
      expect(isUniqueViolation(error, "slugs_slug_key")).toBe(true)
      expect(isUniqueViolation(error, "other_key")).toBe(false)
      expect(isUniqueViolation(yield* Effect.flip(sql`SELEC 1`))).toBe(false)
      expect(reasonOf(yield* Effect.flip(sql`SELEC 1`))).toBe("SqlSyntaxError")
    }))

  it.effect("cancels a statement on the server when it is interrupted", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const running = sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(30)%'`
      // Asked every 25 ms for up to 20 s, short of the statement's 30 s: 200 reads back to back
      // were over before a loaded CI machine had carried out the cancel (one run, 2026-12-01), and
      // so were 200 reads 25 ms apart (another run, the same day, four test files beside it).
      const poll = Schedule.spaced("25 millis")
      const fiber = yield* Effect.forkChild(sql`SELECT pg_sleep(30)`)
      const seen = yield* running.pipe(Effect.repeat({ until: (rows) => rows[0]?.n === 1, times: 800, schedule: poll }))
      expect(seen[0]?.n).toBe(1)
      yield* Fiber.interrupt(fiber)
      const left = yield* running.pipe(Effect.repeat({ until: (rows) => rows[0]?.n === 0, times: 800, schedule: poll }))
      expect(left[0]?.n).toBe(0)
    }))

  it.effect("hears the notifications of a channel, and fails the stream when its connection is lost", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const client = yield* PgClient
      const heard = yield* Deferred.make<string>()
      const listening = yield* listenTo(client, "things_changed").pipe(
        Stream.runForEach((payload) => Deferred.succeed(heard, payload)),
        Effect.result,
        Effect.forkChild
      )
      const listeners = sql<{ readonly pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN %'`
      const [listener] = yield* listeners.pipe(Effect.repeat({ until: (rows) => rows.length === 1, times: 200 }))
      yield* sql`SELECT pg_notify(${"things_changed"}, ${"appended"})`
      expect(yield* Deferred.await(heard)).toBe("appended")
      yield* sql`SELECT pg_terminate_backend(${listener!.pid})`
      const ended = yield* Fiber.join(listening)
      expect(Result.isFailure(ended) && SqlError.isSqlError(ended.failure)).toBe(true)
    }))

  it.effect("is the PgClient the outbox relay looks for", () =>
    Effect.map(Effect.serviceOption(PgClient), (client) => expect(Option.isSome(client)).toBe(true)))
})

describe("pgError", () => {
  it("says ConnectionError for refused, reset and timed-out connections and going-away servers", () => {
    for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "08006", "08001", "57P01", "57P03", "53300"]) {
      expect(reasonOf(pgError(Object.assign(new Error("x"), { code }), "query failed"))).toBe("ConnectionError")
    }
    expect(reasonOf(pgError(new Error("Connection terminated unexpectedly"), "query failed"))).toBe("ConnectionError")
    expect(reasonOf(pgError(new Error("timeout exceeded when trying to connect"), "Failed to acquire connection"))).toBe("ConnectionError")
    expect(reasonOf(pgError(undefined, "Failed to acquire connection"))).toBe("ConnectionError")
    expect(reasonOf(pgError(new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })]), "query failed"))).toBe("ConnectionError")
  })

  it("classifies other failures by SQLSTATE", () => {
    const reasons = ["42601", "23505", "23503", "22P02", "40001", "40P01", "57014"].map((code) =>
      reasonOf(pgError(Object.assign(new Error("x"), { code, constraint: "c" }), "query failed")))
    expect(reasons).toEqual(["SqlSyntaxError", "UniqueViolation", "ConstraintError", "UnknownError", "SerializationError", "DeadlockError", "StatementTimeoutError"])
  })
})
