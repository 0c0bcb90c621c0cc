import { Migrator, SqlClient, SqlError } from "effect/sql"
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
 * The migrator runs every pending migration in one transaction (after locking its own table), so
 * the locks of the first are held while a later one waits for another table. A serving
 * transaction that waits on the first and holds what the later one wants is a deadlock, and
 * PostgreSQL cancels whichever of the two checks first, `deadlock_timeout` (1 s by default) after
 * it began waiting: without a lock timeout, the serving transaction could be the one cancelled,
 * an integrator's 500 during an upgrade. Giving up after 100 ms, the migration is the one to go
 * unless it began waiting in the last 100 ms of the serving transaction's second. And the requests
 * that queue behind a lock the migration asks for wait at most that long for it (those that need
 * a lock it already holds wait until its try ends, as they always did).
 */
export const MigrationLockTimeoutMs = 100

/**
 * Tries of a batch that could not have its locks: each at most `MigrationLockTimeoutMs` waiting
 * for a lock, then a pause growing from 200 ms to 2 s (jittered): 40 tries again in about 75 s.
 * Each try does again what its migrations did before the lock they could not have.
 */
const lockedOutRetries = (times: number) =>
  Schedule.max([
    Schedule.jittered(Schedule.min([Schedule.exponential(Duration.millis(200), 1.5), Schedule.spaced(Duration.seconds(2))])),
    Schedule.recurs(times)
  ])

/** How many times a batch that could not have its locks is tried again (`lockedOutRetries`). */
export const MigrationLockRetries = 40

/**
 * Whether `error` is a batch that gave up on a lock or was cancelled in a deadlock: nothing of it
 * was applied. A migration's failure comes wrapped by the migrator (its `cause`), one of the
 * migrator's own statements bare.
 */
const lockedOut = (error: unknown): boolean => {
  const sqlError = SqlError.isSqlError(error) ? error : SqlError.isSqlError((error as { readonly cause?: unknown } | undefined)?.cause) ? (error as { readonly cause: SqlError.SqlError }).cause : undefined
  const tag = sqlError?.reason._tag
  return tag === "LockTimeoutError" || tag === "DeadlockError"
}

const apply = (schema: string, migrations: Migrations, lockRetries: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
    const table = `${schema}.migrations`
    // SET LOCAL: for the rest of the migrator's transaction only, never a pooled connection's later work.
    const lockTimeout = sql.unsafe(`SET LOCAL lock_timeout = ${MigrationLockTimeoutMs}`)
    const bounded = Object.fromEntries(Object.entries(migrations).map(([key, migration]) => [key, Effect.andThen(lockTimeout, migration)]))
    const migrate = (record: Migrations) => runMigrator({ loader: Migrator.fromRecord(record), table })
    const applied = yield* migrate(bounded).pipe(
      Effect.tapError((error) =>
        lockedOut(error)
          ? Effect.logInfo("migrations: a lock was held by another transaction; everything rolled back, to be tried again", { schema, error: String(error) })
          : Effect.void
      ),
      Effect.retry({ schedule: lockedOutRetries(lockRetries), while: lockedOut }),
      // A transaction that held a lock through every try (a long one: a demo seed, a relay stuck
      // on NATS) is waited for, as migrations always were, rather than failing the upgrade: the
      // last try takes its locks without a timeout.
      Effect.catchIf(lockedOut, (error) =>
        Effect.logWarning("migrations: a lock was held through every try; trying once more, waiting for it as long as it takes", {
          schema,
          error: String(error)
        }).pipe(Effect.andThen(migrate(migrations)))
      )
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
 * `lockRetries`: the services keep the default; a test waits less.
 */
export const SchemaMigrationsLive = (schema: string, migrations: Migrations, lockRetries = MigrationLockRetries) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const mode = yield* migrationsMode
      if (mode === "skip") return yield* waitForMigrations(schema, migrations)
      if (mode === "run") return yield* apply(schema, migrations, lockRetries)
      // A SIGTERM must not turn a half-done job into a success: the migrations finish (each runs in
      // one transaction anyway), then the interruption ends the process, which exits 0 on an
      // interruption only (NodeRuntime.runMain).
      yield* Effect.uninterruptible(apply(schema, migrations, lockRetries))
      yield* Effect.logInfo("MIGRATIONS=only: the schema is up to date, stopping", { schema })
      return yield* Effect.interrupt
    })
  )
