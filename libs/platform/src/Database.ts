import { NodeContext } from "@effect/platform-node"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Migrator, SqlClient } from "@effect/sql"
import { Config, Duration, Effect, Layer, String as Str } from "effect"
import pg from "pg"

// int8 (bigint) columns hold money in minor units; JSON numbers carry them exactly up to 2^53,
// which the schemas enforce on the way in, so reading them as numbers is lossless.
pg.types.setTypeParser(20, (value: string) => {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new Error(`int8 value ${value} exceeds the safe integer range`)
  return n
})

/**
 * The PostgreSQL pool of a service, from `DATABASE_URL`. Built once per process: every call of a
 * `PgClient.layer*` factory opens another pool. `DATABASE_POOL_SIZE` sizes it.
 */
export const PgLive = PgClient.layerConfig({
  url: Config.redacted("DATABASE_URL"),
  maxConnections: Config.integer("DATABASE_POOL_SIZE").pipe(Config.withDefault(10)),
  // Without it node-postgres waits forever for an unreachable server or a free slot; with it the
  // request fails in time to be answered 503 (Retry-After) well inside the gateway's upstream timeout.
  connectTimeout: Config.succeed(Duration.seconds(5)),
  transformResultNames: Config.succeed(Str.snakeToCamel),
  transformQueryNames: Config.succeed(Str.camelToSnake),
  applicationName: Config.string("SERVICE_NAME").pipe(Config.withDefault("portfolio"))
})

/**
 * Runs a service's migrations inside its own schema, recorded in `<schema>.migrations`. Keys of
 * `migrations` are `<id>_<name>` (for example `0001_create_applications`).
 */
export const migrationsLayer = (
  schema: string,
  migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
      const applied = yield* PgMigrator.run({ loader: Migrator.fromRecord(migrations), table: `${schema}.migrations` })
      if (applied.length > 0) yield* Effect.logInfo("migrations applied", { schema, applied: applied.map(([id, name]) => `${id}_${name}`) })
    })
  ).pipe(Layer.provide(NodeContext.layer))

/** The readiness of a service that needs its database: one round trip on the pool. */
export const databaseReady = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)
