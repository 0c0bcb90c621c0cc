import { randomBytes } from "node:crypto"
import pg from "pg"

/** The server every run may create databases on; a machine of this project has one with trust auth. */
const adminUrl = process.env["BLACKBOX_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

export interface FreshDatabase {
  readonly name: string
  readonly url: string
  readonly drop: () => Promise<void>
}

const withAdmin = async <A>(run: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** A database of its own (`<prefix>_<random>`), so that parallel runs never see each other's rows. */
export const createDatabase = async (prefix = "bb"): Promise<FreshDatabase> => {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    // FORCE ends the connections of processes that did not close their pools in time.
    drop: () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)
  }
}
