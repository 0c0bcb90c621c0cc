import { ConfigProvider, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { PgLive } from "../src/sql/Database.js"

/**
 * Databases of their own for test runs, created through the `test` database of the server the
 * tests may use (a machine of this project has one with trust auth; TEST_POSTGRES_URL overrides
 * it), so that parallel files and runs never see each other's rows.
 */
const adminUrl = () => process.env["TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

export interface FreshDatabase {
  readonly name: string
  readonly url: string
  readonly drop: () => Promise<void>
}

const onAdmin = async (statement: string): Promise<void> => {
  const client = new pg.Client({ connectionString: adminUrl() })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/** Removes the database `name` (one createDatabase named) if it is there, ending connections left open (FORCE). */
export const dropDatabase = async (name: string): Promise<void> => {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a database name of createDatabase: ${JSON.stringify(name)}`)
  await onAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

/** A new database `<prefix>_<random>`; `drop` removes it (dropDatabase). */
export const createDatabase = async (prefix: string): Promise<FreshDatabase> => {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`
  await onAdmin(`CREATE DATABASE ${name}`)
  const url = new URL(adminUrl())
  url.pathname = `/${name}`
  return { name, url: url.toString(), drop: () => dropDatabase(name) }
}

/** A fresh database for the life of a scope. */
export const freshDatabase = (prefix: string) =>
  Effect.acquireRelease(Effect.promise(() => createDatabase(prefix)), (database) => Effect.promise(database.drop))

/** The services' own pool layer (`PgLive`), pointed at a fresh database dropped with the layer. */
export const FreshPgLive = (prefix: string, poolSize = 10) =>
  Layer.unwrap(
    Effect.map(freshDatabase(prefix), ({ url }) =>
      PgLive.pipe(
        Layer.provide(
          ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_URL: url, DATABASE_POOL_SIZE: String(poolSize) }))
        )
      ))
  )
