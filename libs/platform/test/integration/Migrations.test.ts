import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Deferred, Effect, Exit, Fiber, Layer } from "effect"
import pg from "pg"
import { PgLive } from "../../src/sql/Database.js"
import { latestKnownMigration, SchemaMigrationsLive } from "../../src/sql/Migrations.js"
import { createDatabase, type FreshDatabase } from "../../testing/FreshDatabase.js"

// The three MIGRATIONS modes against a real PostgreSQL: `run` for npm start and the tests, `only`
// for the chart's hook Job, `skip` for the replicas that wait for that Job.
// Live clock: `skip` waits and times out in real time.
const schema = "modes"

const createThings = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE modes.things (id int PRIMARY KEY)`)
const addName = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE modes.things ADD COLUMN name text`)
const firstOnly = { "0001_things": createThings }
const both = { "0001_things": createThings, "0002_name": addName }

let database: FreshDatabase
beforeAll(async () => {
  database = await createDatabase("it_migrations")
})
afterAll(() => database?.drop())

/** Statements on the database, outside the layer under test. */
const query = async (text: string) => {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

const recorded = async () => (await query(`SELECT migration_id FROM modes.migrations ORDER BY 1`)).map((row) => row.migration_id as number)

const reset = () => query(`DROP SCHEMA IF EXISTS modes CASCADE`)

/** Builds `SchemaMigrationsLive` on the service's own pool, with these variables. */
const build = (migrations: Parameters<typeof SchemaMigrationsLive>[1], env: Record<string, string> = {}, lockRetries?: number) =>
  Effect.scoped(Layer.build(SchemaMigrationsLive(schema, migrations, lockRetries).pipe(Layer.provide(PgLive)))).pipe(
    Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: "2", ...env })))
  )

describe("latestKnownMigration", () => {
  it("reads the ids as the migrator does, ignoring keys it would ignore", () => {
    expect(latestKnownMigration({ "0002_b": Effect.void, "0010_c": Effect.void, "0001_a": Effect.void })).toBe(10)
    expect(latestKnownMigration({ readme: Effect.void })).toBe(0)
  })
})

describe("MIGRATIONS=run, the default", () => {
  it.live("applies what is missing, once, and starts", () =>
    Effect.gen(function*() {
      yield* Effect.promise(reset)
      yield* build(firstOnly)
      expect(yield* Effect.promise(recorded)).toEqual([1])
      yield* build(both, { MIGRATIONS: "run" })
      yield* build(both)
      expect(yield* Effect.promise(recorded)).toEqual([1, 2])
    }))
})

describe("MIGRATIONS=only, the chart's Job", () => {
  it.live("applies the migrations and then stops the process as an interruption, which exits 0", () =>
    Effect.gen(function*() {
      yield* Effect.promise(reset)
      const exit = yield* Effect.exit(build(both, { MIGRATIONS: "only" }))
      expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
      expect(yield* Effect.promise(recorded)).toEqual([1, 2])
    }))

  it.live("finishes a migration under way when the process is told to stop, so that the Job never succeeds half done", () =>
    Effect.gen(function*() {
      yield* Effect.promise(reset)
      const started = yield* Deferred.make<void>()
      const slow = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.andThen(Deferred.succeed(started, undefined), sql`SELECT pg_sleep(0.5)`.pipe(Effect.andThen(sql`CREATE TABLE modes.slow (id int)`))))
      const fiber = yield* Effect.forkChild(build({ "0001_slow": slow }, { MIGRATIONS: "only" }))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(yield* Effect.promise(recorded)).toEqual([1])
      expect(yield* Effect.promise(() => query(`SELECT to_regclass('modes.slow')::text AS t`))).toEqual([{ t: "modes.slow" }])
    }))
})

describe("MIGRATIONS=skip, the chart's replicas", () => {
  it.live("starts at once when every migration it knows is recorded, changing nothing", () =>
    Effect.gen(function*() {
      yield* Effect.promise(reset)
      yield* build(both)
      const before = yield* Effect.promise(() => query(`SELECT migration_id, created_at FROM modes.migrations ORDER BY 1`))
      yield* build(both, { MIGRATIONS: "skip", MIGRATIONS_WAIT_TIMEOUT: "1 second" })
      expect(yield* Effect.promise(() => query(`SELECT migration_id, created_at FROM modes.migrations ORDER BY 1`))).toEqual(before)
    }))

  it.live("neither creates the schema nor migrates, and stops after the timeout naming what is missing", () =>
    Effect.gen(function*() {
      yield* Effect.promise(reset)
      const error = yield* Effect.flip(build(both, { MIGRATIONS: "skip", MIGRATIONS_WAIT_TIMEOUT: "1200 millis" }))
      expect(String(error)).toContain("MIGRATIONS=skip: the schema 'modes' still lacks migrations")
      expect(String(error)).toContain("this build needs up to 2; found no migrations table yet")
      expect(String(error)).toContain("MIGRATIONS=only")
      expect(yield* Effect.promise(() => query(`SELECT schema_name FROM information_schema.schemata WHERE schema_name = 'modes'`))).toEqual([])
    }))

  it.live("does not take an older schema for this build's", () =>
    Effect.gen(function*() {
      yield* Effect.promise(reset)
      yield* build(firstOnly)
      const error = yield* Effect.flip(build(both, { MIGRATIONS: "skip", MIGRATIONS_WAIT_TIMEOUT: "1200 millis" }))
      expect(String(error)).toContain("found migrations up to 1")
      expect(yield* Effect.promise(recorded)).toEqual([1])
    }))

  it.live("starts as soon as the Job has migrated, without waiting for the timeout", () =>
    Effect.gen(function*() {
      yield* Effect.promise(reset)
      yield* build(firstOnly)
      const waiting = yield* Effect.forkChild(build(both, { MIGRATIONS: "skip", MIGRATIONS_WAIT_TIMEOUT: "30 seconds" }))
      yield* Effect.sleep("1500 millis")
      expect(waiting.pollUnsafe()).toBeUndefined()
      const startedAt = Date.now()
      yield* Effect.exit(build(both, { MIGRATIONS: "only" }))
      yield* Fiber.join(waiting)
      // It looks once a second.
      expect(Date.now() - startedAt).toBeLessThan(3_000)
      expect(yield* Effect.promise(recorded)).toEqual([1, 2])
    }), { timeout: 20_000 })
})

describe("migrations beside serving transactions (an upgrade: the new migrations while the previous version serves)", () => {
  const tables = {
    "0001_tables": Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`CREATE TABLE modes.a (id int PRIMARY KEY)`.pipe(
        Effect.andThen(sql`CREATE TABLE modes.b (id int PRIMARY KEY, n int)`),
        Effect.andThen(sql`INSERT INTO modes.b VALUES (1, 0)`)
      ))
  }
  // One batch, one transaction: the first keeps modes.a locked while the second waits for modes.b.
  const upgrade = {
    ...tables,
    "0002_alter_a": Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE modes.a ADD COLUMN x int`.pipe(Effect.andThen(sql`SELECT pg_sleep(0.6)`))),
    "0003_refer_to_b": Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE modes.c (b_id int REFERENCES modes.b (id))`)
  }

  /**
   * The tables made, and a serving transaction on a connection of its own (ended with the test)
   * that holds a row of b (ROW EXCLUSIVE), as a write does.
   */
  const servingHoldingB = Effect.gen(function*() {
    yield* Effect.promise(reset)
    yield* build(tables)
    const serving = new pg.Client({ connectionString: database.url })
    yield* Effect.promise(() => serving.connect())
    yield* Effect.addFinalizer(() => Effect.promise(() => serving.end()))
    yield* Effect.promise(() => serving.query("BEGIN").then(() => serving.query("UPDATE modes.b SET n = n + 1 WHERE id = 1")))
    return serving
  })

  it.live("a deadlock with a serving transaction cancels the migration, which is tried again, never the serving transaction", () =>
    Effect.gen(function*() {
      const serving = yield* servingHoldingB
      const migrating = yield* Effect.forkChild(build(upgrade, { MIGRATIONS: "only" }))
      // Once the migration holds a, the serving transaction writes to a: it waits on the migration
      // from here, and the migration waits on it 0.6 s later. Its own deadlock check comes at 1 s.
      yield* Effect.promise(async () => {
        for (let i = 0; i < 200; i++) {
          const held = await query(`SELECT 1 FROM pg_locks WHERE relation = to_regclass('modes.a') AND mode = 'AccessExclusiveLock' AND granted`)
          if (held.length > 0) return
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        throw new Error("the migration never locked modes.a")
      })
      const written = yield* Effect.promise(() => serving.query("INSERT INTO modes.a (id) VALUES (7)").then(() => "written", (error: unknown) => String(error)))
      expect(written).toBe("written")
      yield* Effect.promise(() => serving.query("COMMIT"))
      // Tried again once the serving transaction is gone: everything applied, the write kept.
      const exit = yield* Fiber.await(migrating)
      expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
      expect(yield* Effect.promise(recorded)).toEqual([1, 2, 3])
      expect(yield* Effect.promise(() => query(`SELECT id, x FROM modes.a`))).toEqual([{ id: 7, x: null }])
    }), { timeout: 30_000 })

  it.live("a lock held through every try is waited for by a last try without the timeout: the upgrade goes on", () =>
    Effect.gen(function*() {
      const serving = yield* servingHoldingB
      // Two tries again (about 0.5 s), each timed out on b; the last waits until the commit.
      const migrating = yield* Effect.forkChild(build({ ...tables, "0002_refer_to_b": upgrade["0003_refer_to_b"] }, { MIGRATIONS: "only" }, 2))
      yield* Effect.sleep("2 seconds")
      // Still waiting (its table locked meanwhile: nothing reads it before the commit).
      expect(migrating.pollUnsafe()).toBeUndefined()
      yield* Effect.promise(() => serving.query("COMMIT"))
      const exit = yield* Fiber.await(migrating)
      expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
      expect(yield* Effect.promise(recorded)).toEqual([1, 2])
    }), { timeout: 30_000 })
})

describe("MIGRATIONS itself", () => {
  it.live("refuses another value, naming the variable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(build(both, { MIGRATIONS: "later" }))
      expect(String(error)).toContain("MIGRATIONS")
    }))
})
