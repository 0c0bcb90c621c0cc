import { SqlClient } from "effect/sql"
import { ChangeLogEntry, LinkedApplication, trusted } from "@portfolio/domain"
import { Array as Arr, DateTime, Effect, Schema } from "effect"
import { ApplicationRecord } from "../../domain/ApplicationRecord.js"
import { FunctionFields, FunctionRecord, LocatedFunction } from "../../domain/FunctionRecord.js"

/** Row shapes of the `referential` schema; `pg` hands timestamptz columns over as `Date`. */
const stamps = { createdAt: Schema.DateTimeUtcFromDate, updatedAt: Schema.DateTimeUtcFromDate }

export const ApplicationRow = Schema.Struct({ ...ApplicationRecord.fields, ...stamps })

export const FunctionFieldsRow = Schema.Struct({ ...FunctionFields.fields, ...stamps })
export const LocatedFunctionRow = Schema.Struct({ ...LocatedFunction.fields, ...stamps })

/** A row of `referential.application_tallies`: how many of a tenant's applications have `value` as their `dimension`. */
export const TallyRow = Schema.Struct({
  dimension: Schema.Literals(["status", "criticality", "data_classification"]),
  value: Schema.String,
  n: Schema.Number
})
export type TallyRow = typeof TallyRow.Type

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
      const chunk = rows.slice(start, start + perStatement)
      // Never empty (start is below the length): the check only tells the type.
      if (Arr.isReadonlyArrayNonEmpty(chunk)) yield* sql`INSERT INTO ${sql(table)} ${sql.insert(chunk)}`
    }
  })

/**
 * The rows of the whole-tenant reads (every function, every application), decoded by hand: at
 * 25,000 functions the schema's decoding cost more than the query itself (measured: 550 against
 * 160 ms), to check what the table's own column types and constraints already guarantee. They are
 * read without the client's renaming of columns to camel case (`sql.withoutTransforms()`), which
 * copied every row once more. bigint comes as a number (libs/platform's Database.ts), and times as
 * milliseconds since the epoch (`stampsOf`): `pg` parses a timestamptz's text into a `Date` at
 * several microseconds each, 50,000 of them for a forest. A page of applications is decoded the
 * same way (a hundred rows through the schemas cost more than their statement), and a page of a
 * change log (`changeOf`: 50 entries through the schema allocated some 300 KB, most of what the
 * whole read allocated); reads of one row and the other pages keep the schemas above.
 */
interface StampedRow {
  readonly created_at_ms: number
  readonly updated_at_ms: number
}

/** A timestamptz `column` as whole milliseconds since the epoch, rounded down as `pg`'s parsing into a `Date` does. */
export const millisOf = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::bigint`

/**
 * The columns `created_at` and `updated_at` of `alias` as `StampedRow` reads them: whole
 * milliseconds, rounded down as `pg`'s own parsing of the text does (the services write
 * milliseconds only).
 */
export const stampsOf = (alias: string) => `${millisOf(`${alias}.created_at`)} AS created_at_ms, ${millisOf(`${alias}.updated_at`)} AS updated_at_ms`

export interface FunctionFieldsSqlRow extends StampedRow {
  readonly id: string
  readonly code: string
  readonly name: string
  readonly description: string | null
  readonly parent_id: string | null
}

const functionFieldsOf = (row: FunctionFieldsSqlRow): FunctionFields => ({
  id: row.id,
  code: row.code,
  name: row.name,
  description: row.description,
  parentId: row.parent_id,
  createdAt: DateTime.makeUnsafe(row.created_at_ms),
  updatedAt: DateTime.makeUnsafe(row.updated_at_ms)
})

/**
 * A list the whole-tenant statements join with commas (a function's application codes, an
 * application's regulations), in their order: neither an ApplicationCode (its pattern) nor a
 * regulation token holds a comma, and splitting a text is several times cheaper than `pg`'s
 * parsing of an array literal.
 */
const listOf = <A extends string>(joined: string): ReadonlyArray<A> => (joined === "" ? [] : joined.split(",") as Array<A>)

export const functionRecordOf = (row: FunctionFieldsSqlRow & { readonly application_codes: string }): FunctionRecord => ({
  ...functionFieldsOf(row),
  applicationCodes: listOf(row.application_codes)
})

/** An application as a link to it shows it (posi), from its row and its parent's name. */
export interface LinkedApplicationSqlRow {
  readonly code: string
  readonly name: string
  readonly parent_code: string | null
  readonly parent_name: string | null
  readonly criticality: LinkedApplication["criticality"]
  readonly revision: number | string
  readonly parent_revision: number | string | null
}

// Built from columns of the applications table, which hold valid values only.
export const linkedApplicationOf = (row: LinkedApplicationSqlRow): LinkedApplication =>
  trusted(LinkedApplication, { code: row.code, name: row.name, parentCode: row.parent_code, parentName: row.parent_name, criticality: row.criticality })

export interface ApplicationSqlRow extends StampedRow {
  readonly code: string
  readonly name: string
  readonly description: string | null
  readonly parent_code: string | null
  readonly status: ApplicationRecord["status"]
  readonly data_classification: ApplicationRecord["dataClassification"]
  readonly criticality: ApplicationRecord["criticality"]
  readonly rto_hours: number | null
  readonly rpo_hours: number | null
  readonly license_cost: number | null
  readonly support_cost: number | null
  readonly infra_cost: number | null
  readonly staff_cost: number | null
  readonly legacy_annual_cost: number | null
  readonly revision: number
  /** Comma-separated tokens (none holds a comma), sorted as the enum is. */
  readonly regulations: string
  readonly role_assignments: ApplicationRecord["roleAssignments"]
}

export const applicationRecordOf = (row: ApplicationSqlRow): ApplicationRecord => ({
  code: row.code,
  name: row.name,
  description: row.description,
  parentCode: row.parent_code,
  status: row.status,
  dataClassification: row.data_classification,
  criticality: row.criticality,
  rtoHours: row.rto_hours,
  rpoHours: row.rpo_hours,
  regulations: listOf<ApplicationRecord["regulations"][number]>(row.regulations),
  roleAssignments: row.role_assignments,
  licenseCost: row.license_cost,
  supportCost: row.support_cost,
  infraCost: row.infra_cost,
  staffCost: row.staff_cost,
  legacyAnnualCost: row.legacy_annual_cost,
  revision: row.revision,
  createdAt: DateTime.makeUnsafe(row.created_at_ms),
  updatedAt: DateTime.makeUnsafe(row.updated_at_ms)
})

/** A change-log entry's row as `listChanges` reads it: its time as milliseconds (`millisOf`). */
export interface ChangeSqlRow {
  readonly id: string
  readonly application_code: string
  readonly field: ChangeLogEntry["field"]
  readonly old_value: string | null
  readonly new_value: string | null
  readonly changed_by: string
  readonly changed_at_ms: number
}

// Built from columns whose types and CHECK constraints hold only valid values (Migrations.ts).
export const changeOf = (row: ChangeSqlRow): ChangeLogEntry =>
  trusted(ChangeLogEntry, {
    id: row.id,
    applicationCode: row.application_code,
    field: row.field,
    oldValue: row.old_value,
    newValue: row.new_value,
    changedBy: row.changed_by,
    changedAt: DateTime.makeUnsafe(row.changed_at_ms)
  })
