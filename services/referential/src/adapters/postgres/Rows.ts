import { SqlClient } from "@effect/sql"
import { ChangeLogEntry } from "@portfolio/domain"
import { Effect, Schema } from "effect"
import { ApplicationRecord } from "../../domain/ApplicationRecord.js"
import { EnrichedFunctionRecord, FunctionFields, FunctionRecord, LocatedFunction } from "../../domain/FunctionRecord.js"

/** Row shapes of the `referential` schema; `pg` hands timestamptz columns over as `Date`. */
const stamps = { createdAt: Schema.DateTimeUtcFromDate, updatedAt: Schema.DateTimeUtcFromDate }

export const ApplicationRow = Schema.Struct({ ...ApplicationRecord.fields, ...stamps })
export const ChangeRow = Schema.Struct({ ...ChangeLogEntry.fields, changedAt: Schema.DateTimeUtcFromDate })

export const FunctionFieldsRow = Schema.Struct({ ...FunctionFields.fields, ...stamps })
export const FunctionRow = Schema.Struct({ ...FunctionRecord.fields, ...stamps })
export const LocatedFunctionRow = Schema.Struct({ ...LocatedFunction.fields, ...stamps })
export const EnrichedFunctionRow = Schema.Struct({ ...EnrichedFunctionRecord.fields, ...stamps })

const Breakdown = Schema.Array(Schema.Struct({ value: Schema.String, n: Schema.Number }))
export const CountsRow = Schema.Struct({
  functionCount: Schema.Number,
  rootFunctionCount: Schema.Number,
  maxDepth: Schema.Number,
  functionsWithoutApplication: Schema.Number,
  applicationCount: Schema.Number,
  applicationsWithoutFunction: Schema.Number,
  linkCount: Schema.Number,
  applicationsByCriticality: Breakdown,
  applicationsByDataClassification: Breakdown,
  applicationsByStatus: Breakdown
})

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
