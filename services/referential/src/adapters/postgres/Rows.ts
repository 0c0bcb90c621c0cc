import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

/** Storage failures are not expected outcomes of a use case: they end the request as a logged 500. */
export const orDie = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, never, R> => Effect.orDie(effect)

/** Decodes rows with the domain schema; a row that does not fit is a defect of the storage. */
export const decodeRows = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownSync(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>): ReadonlyArray<A> => decode(rows)
}

/** Rows per multi-row INSERT: well below PostgreSQL's 65,535 bind parameters per statement. */
const maxParameters = 30_000

/** Inserts rows in as few multi-row statements as the parameter limit allows. */
export const insertInChunks = (table: string, rows: ReadonlyArray<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const first = rows[0]
    if (first === undefined) return
    const perStatement = Math.max(1, Math.floor(maxParameters / Object.keys(first).length))
    for (let start = 0; start < rows.length; start += perStatement) {
      yield* sql`INSERT INTO ${sql(table)} ${sql.insert(rows.slice(start, start + perStatement) as Array<Record<string, unknown>>)}`
    }
  })
