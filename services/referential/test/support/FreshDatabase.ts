import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Redacted, String as Str } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { ReferentialMigrationsLive } from "../../src/postgres/Migrations.js"
import { ReferentialPg } from "../../src/postgres/ReferentialPg.js"

/** The server runs may create databases on (trust auth on a machine of this project). */
const AdminUrl = Config.string("TEST_POSTGRES_URL").pipe(Config.withDefault("postgres://postgres@127.0.0.1:5432/test"))

const onAdmin = (adminUrl: string, statement: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  })

/** A database of its own for the test file, dropped when its layer is released. */
const freshDatabaseUrl = Effect.gen(function*() {
  const adminUrl = yield* AdminUrl
  const name = `it_referential_${randomBytes(6).toString("hex")}`
  yield* Effect.acquireRelease(
    onAdmin(adminUrl, `CREATE DATABASE ${name}`),
    // FORCE ends connections a failed test may have left open.
    () => onAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  )
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
})

/** A pool on a fresh database, configured as the service's own (`PgLive`). */
export const FreshPgLive = Layer.unwrapScoped(
  Effect.map(freshDatabaseUrl, (url) =>
    PgClient.layer({
      url: Redacted.make(url),
      maxConnections: 10,
      transformResultNames: Str.snakeToCamel,
      transformQueryNames: Str.camelToSnake
    }))
)

/** The referential's PostgreSQL ports on a fresh, migrated database, with its SqlClient. */
export const FreshReferentialPg = ReferentialPg.pipe(Layer.provideMerge(ReferentialMigrationsLive), Layer.provideMerge(FreshPgLive))
