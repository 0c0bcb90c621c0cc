import { PgLive } from "@portfolio/platform"
import { ConfigProvider, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"

const adminUrl = "postgres://postgres@127.0.0.1:5432/test"

const admin = <A>(statement: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  }) as Effect.Effect<A>

/** A database of its own for one test file, created through `test` and dropped afterwards. */
export const freshDatabaseUrl = Effect.acquireRelease(
  Effect.gen(function*() {
    const name = `it_${randomBytes(6).toString("hex")}`
    yield* admin(`CREATE DATABASE ${name}`)
    return { name, url: `postgres://postgres@127.0.0.1:5432/${name}` }
  }),
  ({ name }) => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
)

/** The services' real pool layer, pointed at a fresh database. */
export const FreshPgLive = Layer.unwrapScoped(
  Effect.map(freshDatabaseUrl, ({ url }) =>
    PgLive.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", url], ["DATABASE_POOL_SIZE", "20"]]))))))
)
