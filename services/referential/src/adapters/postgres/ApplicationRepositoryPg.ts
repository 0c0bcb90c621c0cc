import { SqlClient } from "@effect/sql"
import type { ApplicationFilters, ChangeLogEntry as ChangeLogEntryType } from "@portfolio/domain"
import { ChangeLogEntry } from "@portfolio/domain"
import { ApplicationRecord } from "../../domain/ApplicationRecord.js"
import { ApplicationRepository } from "../../ports/ApplicationRepository.js"
import { Effect, Layer, Option, Schema } from "effect"
import { decodeRows, insertInChunks, orDie } from "./Rows.js"

const ApplicationRow = Schema.Struct({
  ...ApplicationRecord.fields,
  createdAt: Schema.DateTimeUtcFromDate,
  updatedAt: Schema.DateTimeUtcFromDate
})
const decodeApplications = decodeRows(ApplicationRow)

const ChangeRow = Schema.Struct({ ...ChangeLogEntry.fields, changedAt: Schema.DateTimeUtcFromDate })
const decodeChanges = decodeRows(ChangeRow)

const columns = (record: ApplicationRecord) => ({
  code: record.code,
  name: record.name,
  description: record.description,
  parentCode: record.parentCode,
  status: record.status,
  dataClassification: record.dataClassification,
  criticality: record.criticality,
  rtoHours: record.rtoHours,
  rpoHours: record.rpoHours,
  licenseCost: record.licenseCost,
  supportCost: record.supportCost,
  infraCost: record.infraCost,
  staffCost: record.staffCost,
  legacyAnnualCost: record.legacyAnnualCost,
  createdAt: new Date(record.createdAt.epochMillis),
  updatedAt: new Date(record.updatedAt.epochMillis)
})

const regulationRows = (tenantId: string, record: ApplicationRecord) =>
  record.regulations.map((regulation) => ({ tenantId, applicationCode: record.code, regulation }))

const assignmentRows = (tenantId: string, record: ApplicationRecord) =>
  record.roleAssignments.map((pair, position) => ({ tenantId, applicationCode: record.code, position, role: pair.role, contact: pair.contact }))

export const ApplicationRepositoryPg = Layer.effect(
  ApplicationRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // One statement per read: the multi-valued fields come along as an array and a JSON list.
    const select = sql`
      SELECT a.code, a.name, a.description, a.parent_code, a.status, a.data_classification, a.criticality,
        a.rto_hours, a.rpo_hours, a.license_cost, a.support_cost, a.infra_cost, a.staff_cost, a.legacy_annual_cost,
        a.created_at, a.updated_at,
        ARRAY(
          SELECT r.regulation::text FROM referential.application_regulations r
          WHERE r.tenant_id = a.tenant_id AND r.application_code = a.code ORDER BY r.regulation
        ) AS regulations,
        COALESCE((
          SELECT json_agg(json_build_object('role', s.role, 'contact', s.contact) ORDER BY s.position)
          FROM referential.application_role_assignments s
          WHERE s.tenant_id = a.tenant_id AND s.application_code = a.code
        ), '[]'::json) AS role_assignments
      FROM referential.applications a`

    const filterClauses = (tenantId: string, filters: ApplicationFilters) => [
      sql`a.tenant_id = ${tenantId}`,
      ...(filters.data_class === undefined ? [] : [sql`a.data_classification = ${filters.data_class}`]),
      ...(filters.criticality === undefined ? [] : [sql`a.criticality = ${filters.criticality}`]),
      ...(filters.status === undefined ? [] : [sql`a.status = ${filters.status}`]),
      ...(filters.regulation === undefined ? [] : [
        sql`EXISTS (
          SELECT 1 FROM referential.application_regulations r
          WHERE r.tenant_id = a.tenant_id AND r.application_code = a.code AND r.regulation = ${filters.regulation}
        )`
      ])
    ]

    const writeMultiValued = (tenantId: string, records: ReadonlyArray<ApplicationRecord>) =>
      Effect.zipRight(
        insertInChunks("referential.application_regulations", records.flatMap((record) => regulationRows(tenantId, record))),
        insertInChunks("referential.application_role_assignments", records.flatMap((record) => assignmentRows(tenantId, record)))
      ).pipe(Effect.provideService(SqlClient.SqlClient, sql))

    return ApplicationRepository.of({
      list: (tenantId, filters) =>
        sql`${select} WHERE ${sql.and(filterClauses(tenantId, filters))} ORDER BY a.code`.pipe(Effect.map(decodeApplications), orDie),

      find: (tenantId, code) =>
        sql`${select} WHERE a.tenant_id = ${tenantId} AND a.code = ${code}`.pipe(
          Effect.map((rows) => Option.fromNullable(decodeApplications(rows)[0])),
          orDie
        ),

      ancestorCodes: (tenantId, code) =>
        sql<{ code: string }>`
          WITH RECURSIVE up (code, parent_code, depth) AS (
            SELECT code, parent_code, 0 FROM referential.applications WHERE tenant_id = ${tenantId} AND code = ${code}
            UNION ALL
            SELECT a.code, a.parent_code, up.depth + 1
            FROM referential.applications a JOIN up ON a.tenant_id = ${tenantId} AND a.code = up.parent_code
          )
          SELECT code FROM up WHERE depth > 0 ORDER BY depth`.pipe(Effect.map((rows) => rows.map((row) => row.code)), orDie),

      count: (tenantId) =>
        sql<{ n: number }>`SELECT count(*) AS n FROM referential.applications WHERE tenant_id = ${tenantId}`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          orDie
        ),

      insert: (tenantId, record) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO referential.applications ${sql.insert({ tenantId, ...columns(record) })}`
          yield* writeMultiValued(tenantId, [record])
        }).pipe(orDie),

      update: (tenantId, record) =>
        Effect.gen(function*() {
          const { code: _code, createdAt: _createdAt, ...changed } = columns(record)
          yield* sql`UPDATE referential.applications SET ${sql.update(changed)} WHERE tenant_id = ${tenantId} AND code = ${record.code}`
          yield* sql`DELETE FROM referential.application_regulations WHERE tenant_id = ${tenantId} AND application_code = ${record.code}`
          yield* sql`DELETE FROM referential.application_role_assignments WHERE tenant_id = ${tenantId} AND application_code = ${record.code}`
          yield* writeMultiValued(tenantId, [record])
        }).pipe(orDie),

      insertMany: (tenantId, records) =>
        Effect.gen(function*() {
          yield* insertInChunks("referential.applications", records.map((record) => ({ tenantId, ...columns(record) })))
          yield* writeMultiValued(tenantId, records)
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql), orDie),

      appendChanges: (tenantId, entries: ReadonlyArray<ChangeLogEntryType>) =>
        insertInChunks(
          "referential.application_changes",
          entries.map((entry) => ({
            id: entry.id,
            tenantId,
            applicationCode: entry.applicationCode,
            field: entry.field,
            oldValue: entry.oldValue,
            newValue: entry.newValue,
            changedBy: entry.changedBy,
            changedAt: new Date(entry.changedAt.epochMillis)
          }))
        ).pipe(Effect.provideService(SqlClient.SqlClient, sql), orDie),

      listChanges: (tenantId, code, limit) =>
        sql`
          SELECT id, application_code, field, old_value, new_value, changed_by, changed_at
          FROM referential.application_changes
          WHERE tenant_id = ${tenantId} AND application_code = ${code}
          ORDER BY changed_at DESC, seq DESC
          LIMIT ${limit}`.pipe(
          Effect.map((rows) => decodeChanges(rows).map((row) => new ChangeLogEntry(row, true))),
          orDie
        )
    })
  })
)
