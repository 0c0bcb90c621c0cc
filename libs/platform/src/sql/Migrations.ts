import { Migrator, SqlClient } from "effect/sql"
import { Config, Duration, Effect, Layer, Option, Result, Schedule } from "effect"
import { durationSetting } from "../config/Settings.js"

/**
 * What a service does with its schema at start (`MIGRATIONS`):
 * - `run` (default): applies what is missing, then starts. Right for one process per service
 *   (`npm start`, the tests); replicas starting together would race to create the table.
 * - `only`: applies what is missing, then stops with exit code 0 without serving: the chart's
 *   pre-install/pre-upgrade Job, so that migrations run once, before any replica rolls.
 * - `skip`: changes nothing; waits until the schema holds every migration this build knows, then
 *   starts, or stops after `MIGRATIONS_WAIT_TIMEOUT` saying what is missing. The chart's replicas.
 */
export type MigrationsMode = "run" | "only" | "skip"

export const migrationsMode: Config.Config<MigrationsMode> = Config.Literals(["run", "only", "skip"], "MIGRATIONS").pipe(
  Config.withDefault("run" as const)
)

/**
 * Below the chart's startup probe budget (2 s x 60): a pod that waits in vain stops with the reason
 * in its log instead of being killed by the kubelet with none.
 */
export const migrationsWaitTimeout = durationSetting("MIGRATIONS_WAIT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(60)))

/** How often `skip` looks at the migrations table while it waits. */
const pollEvery = Duration.seconds(1)

type Migrations = Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>

/** The highest id of `migrations` (keys `<id>_<name>`, as `Migrator.fromRecord` reads them). */
export const latestKnownMigration = (migrations: Migrations): number =>
  Object.keys(migrations).reduce((latest, key) => {
    const id = /^(\d+)_/.exec(key)?.[1]
    return id === undefined ? latest : Math.max(latest, Number(id))
  }, 0)

/**
 * effect/sql's migrator, without a schema dump (no `schemaDirectory` is given). Its table is the
 * one @effect/sql-pg 0.53's made (`migration_id integer primary key, created_at timestamptz,
 * name text`), so that a database migrated before finds its rows and is not migrated again.
 */
const runMigrator = Migrator.make({})

/**
 * How long a migration waits for a lock before its whole batch is rolled back and tried again.
 * The migrator runs every pending migration in one transaction, so the locks of the first are held
 * while a later one waits for another table. A serving transaction that waits on the first and
 * holds what the later one wants is a deadlock, and PostgreSQL cancels whichever of the two checks
 * first, `deadlock_timeout` (1 s by default) after it began waiting: without a lock timeout, the
 * serving transaction could be the one cancelled, an integrator's 500 during an upgrade. Giving up
 * after 100 ms, the migration is the one to go, unless it began waiting in the last 100 ms of that
 * second; and while it waits, the statements queued behind its lock wait at most that long.
 */
export const MigrationLockTimeoutMs = 100

/**
 * Tries of a batch that could not have its locks: each at most `MigrationLockTimeoutMs` waiting,
 * then a pause growing from 200 ms to 2 s (jittered, so that replicas started together in `run`
 * mode do not collide again): about a minute in all, under the chart's hook timeout. A transaction
 * that holds a lock for all of it is not a serving one; the Job then fails, saying so.
 */
const lockedOutRetries = Schedule.max([
  Schedule.jittered(Schedule.min([Schedule.exponential(Duration.millis(200), 1.5), Schedule.spaced(Duration.seconds(2))])),
  Schedule.recurs(40)
])

/** Whether `error` is a batch that gave up on a lock or was cancelled in a deadlock: nothing of it was applied. */
const lockedOut = (error: unknown): boolean => {
  const reason = (error as { readonly cause?: { readonly reason?: { readonly _tag?: string } } } | undefined)?.cause?.reason?._tag
  return reason === "LockTimeoutError" || reason === "DeadlockError"
}

const apply = (schema: string, migrations: Migrations) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
    // SET LOCAL: for the rest of the migrator's transaction only, never a pooled connection's later work.
    const lockTimeout = sql.unsafe(`SET LOCAL lock_timeout = ${MigrationLockTimeoutMs}`)
    const bounded = Object.fromEntries(Object.entries(migrations).map(([key, migration]) => [key, Effect.andThen(lockTimeout, migration)]))
    const applied = yield* runMigrator({ loader: Migrator.fromRecord(bounded), table: `${schema}.migrations` }).pipe(
      Effect.tapError((error) =>
        lockedOut(error)
          ? Effect.logInfo("migrations: a lock was held by another transaction; everything rolled back, trying again", { schema, error: String(error) })
          : Effect.void
      ),
      Effect.retry({ schedule: lockedOutRetries, while: lockedOut })
    )
    if (applied.length > 0) yield* Effect.logInfo("migrations applied", { schema, applied: applied.map(([id, name]) => `${id}_${name}`) })
    return applied
  })

/**
 * The latest migration recorded in `<schema>.migrations`, or none while the table does not exist.
 * The migrator skips every id at or below the latest recorded one, so this is exactly what `run`
 * would find left to do.
 */
const latestApplied = (schema: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [table] = yield* sql<{ readonly exists: string | null }>`SELECT to_regclass(${`${schema}.migrations`})::text AS exists`
    if (table?.exists == null) return Option.none<number>()
    const [row] = yield* sql<{ readonly latest: number | null }>`SELECT max(migration_id) AS latest FROM ${sql(schema)}.migrations`.withoutTransform
    return Option.fromNullishOr(row?.latest)
  })

const describeApplied = (latest: Option.Option<number>) =>
  Option.match(latest, { onNone: () => "no migrations table yet", onSome: (id) => `migrations up to ${id}` })

const waitForMigrations = (schema: string, migrations: Migrations) =>
  Effect.gen(function*() {
    const expected = latestKnownMigration(migrations)
    const timeout = yield* migrationsWaitTimeout
    let last = "the database was not reached"
    const check = latestApplied(schema).pipe(
      Effect.tap((latest) => Effect.sync(() => (last = describeApplied(latest)))),
      Effect.filterOrFail((latest) => Option.isSome(latest) && latest.value >= expected),
      // A database that does not answer yet is waited for too, until the same deadline.
      Effect.tapError((error) => Effect.sync(() => (last = error._tag === "NoSuchElementError" ? last : `the database did not answer (${String(error)})`)))
    )
    const first = yield* Effect.result(check)
    if (Result.isSuccess(first)) return
    yield* Effect.logInfo("waiting for the migrations job", { schema, expected, found: last, timeout: Duration.format(timeout) })
    yield* check.pipe(
      Effect.retry(Schedule.spaced(pollEvery)),
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(new Error(
            `MIGRATIONS=skip: the schema '${schema}' still lacks migrations after ${Duration.format(timeout)} ` +
              `(this build needs up to ${expected}; found ${last}). Run the migrations job (the chart's ` +
              `pre-install/pre-upgrade hook, \`helm upgrade\` runs it) or start one process with MIGRATIONS=only.`
          ))
      })
    )
    yield* Effect.logInfo("migrations found", { schema, expected })
  })

/**
 * A service's schema, handled as `MIGRATIONS` says (see `MigrationsMode`). Keys of `migrations` are
 * `<id>_<name>` (for example `0001_create_applications`), recorded in `<schema>.migrations`.
 */
export const SchemaMigrationsLive = (schema: string, migrations: Migrations) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const mode = yield* migrationsMode
      if (mode === "skip") return yield* waitForMigrations(schema, migrations)
      if (mode === "run") return yield* apply(schema, migrations)
      // A SIGTERM must not turn a half-done job into a success: the migrations finish (each runs in
      // one transaction anyway), then the interruption ends the process, which exits 0 on an
      // interruption only (NodeRuntime.runMain).
      yield* Effect.uninterruptible(apply(schema, migrations))
      yield* Effect.logInfo("MIGRATIONS=only: the schema is up to date, stopping", { schema })
      return yield* Effect.interrupt
    })
  )
