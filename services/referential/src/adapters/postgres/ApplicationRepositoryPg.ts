import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { ApplicationFilters } from "@portfolio/domain"
import type { ApplicationRecord } from "../../domain/ApplicationRecord.js"
import type { ApplicationCounts } from "../../domain/ReferentialCounts.js"
import { ApplicationRepository, type ChangePosition, type HeldLinked, type ListedApplications, type ListedLinked, linkedVersion } from "../../ports/ApplicationRepository.js"
import { Effect, Layer, Option, Schema, Struct } from "effect"
import { ApplicationSelect } from "./ApplicationSelect.js"
import { fromOneSnapshot, inBatches } from "./OneSnapshot.js"
import { applicationRecordOf, ApplicationRow, type ApplicationSqlRow, changeOf, type ChangeSqlRow, insertInChunks, linkedApplicationOf, type LinkedApplicationSqlRow, millisOf, stampsOf, TallyRow } from "./Rows.js"

const TenantAndCode = Schema.Struct({ tenantId: Schema.String, code: Schema.String })

const tallyOf = (rows: ReadonlyArray<TallyRow>, dimension: TallyRow["dimension"]) =>
  Object.fromEntries(rows.filter((row) => row.dimension === dimension).map((row) => [row.value, row.n]))

/** Every application has one status: the total is their sum. */
const applicationCountsOf = (rows: ReadonlyArray<TallyRow>): ApplicationCounts => ({
  applicationCount: rows.reduce((total, row) => (row.dimension === "status" ? total + row.n : total), 0),
  applicationsByCriticality: tallyOf(rows, "criticality"),
  applicationsByDataClassification: tallyOf(rows, "data_classification"),
  applicationsByStatus: tallyOf(rows, "status")
})

/** The row of `referential.applications`: the multi-valued fields have tables of their own. */
const columns = Schema.encodeSync(ApplicationRow.mapFields(Struct.omit(["regulations", "roleAssignments"])))

const regulationRows = (tenantId: string, record: ApplicationRecord) =>
  record.regulations.map((regulation) => ({ tenantId, applicationCode: record.code, regulation }))

const assignmentRows = (tenantId: string, record: ApplicationRecord) =>
  record.roleAssignments.map((pair, position) => ({ tenantId, applicationCode: record.code, position, role: pair.role, contact: pair.contact }))

/** A row's linked version: bigint columns come as strings. */
const versionOf = (row: Pick<LinkedApplicationSqlRow, "revision" | "parent_revision">) =>
  linkedVersion(Number(row.revision), row.parent_revision === null ? null : Number(row.parent_revision))

/** Whether two values of a multi-valued field are the same, in the same order. */
const sameValues = (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => JSON.stringify(a) === JSON.stringify(b)

export const ApplicationRepositoryPg = Layer.effect(
  ApplicationRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The whole-tenant reads, decoded by hand from the columns as named (Rows.ts).
    const raw = sql.withoutTransforms()

    const select = sql.unsafe(ApplicationSelect)

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

    const writeRegulations = (tenantId: string, records: ReadonlyArray<ApplicationRecord>) =>
      insertInChunks("referential.application_regulations", records.flatMap((record) => regulationRows(tenantId, record))).pipe(
        Effect.provideService(SqlClient.SqlClient, sql)
      )
    const writeAssignments = (tenantId: string, records: ReadonlyArray<ApplicationRecord>) =>
      insertInChunks("referential.application_role_assignments", records.flatMap((record) => assignmentRows(tenantId, record))).pipe(
        Effect.provideService(SqlClient.SqlClient, sql)
      )
    const writeMultiValued = (tenantId: string, records: ReadonlyArray<ApplicationRecord>) =>
      Effect.andThen(writeRegulations(tenantId, records), writeAssignments(tenantId, records))

    // The records of the applications `where` selects, and the multi-valued fields of those rows
    // only, each read once and joined by hash rather than by two correlated subqueries per
    // application (measured at 10,000 in one statement: 100 against 150 ms). Decoded by hand
    // (Rows.ts, `applicationRecordOf`): at 10,000 applications the schema's decoding was a third of
    // the read.
    const recordsWhere = (tenantId: string, where: Statement.Fragment) =>
      raw<ApplicationSqlRow>`
        WITH batch AS (
          SELECT a.* FROM referential.applications a
          WHERE ${where}
        )
        SELECT a.code, a.name, a.description, a.parent_code, a.status, a.data_classification, a.criticality,
          a.rto_hours, a.rpo_hours, a.license_cost, a.support_cost, a.infra_cost, a.staff_cost, a.legacy_annual_cost,
          a.revision, ${sql.unsafe(stampsOf("a"))},
          COALESCE(r.regulations, '') AS regulations,
          COALESCE(s.role_assignments, '[]'::json) AS role_assignments
        FROM batch a
        LEFT JOIN (
          SELECT application_code, string_agg(regulation::text, ',' ORDER BY regulation) AS regulations
          FROM referential.application_regulations
          WHERE tenant_id = ${tenantId} AND application_code IN (SELECT code FROM batch)
          GROUP BY application_code
        ) r ON r.application_code = a.code
        LEFT JOIN (
          SELECT application_code, json_agg(json_build_object('role', role, 'contact', contact) ORDER BY position) AS role_assignments
          FROM referential.application_role_assignments
          WHERE tenant_id = ${tenantId} AND application_code IN (SELECT code FROM batch)
          GROUP BY application_code
        ) s ON s.application_code = a.code
        ORDER BY a.code`.pipe(Effect.map((rows) => rows.map(applicationRecordOf)))
    // The whole list against what the caller holds: every code and revision in order (two short
    // columns of the tenant's rows), then the records of those it does not hold at that revision,
    // by code, a batch at a time, all from one snapshot.
    const changedSince = (tenantId: string, filters: ApplicationFilters, held: (code: string, revision: number) => boolean, size: number) =>
      fromOneSnapshot<ListedApplications>(sql, (offer) =>
        Effect.gen(function*() {
          const rows = yield* raw<{ readonly code: string; readonly revision: number | string }>`
            SELECT a.code, a.revision FROM referential.applications a
            WHERE ${sql.and(filterClauses(tenantId, filters))}
            ORDER BY a.code`
          const order = rows.map((row) => ({ code: row.code, revision: Number(row.revision) }))
          yield* offer({ _tag: "Order", order })
          const wanted = order.filter((entry) => !held(entry.code, entry.revision)).map((entry) => entry.code)
          for (let start = 0; start < wanted.length; start += size) {
            const codes = wanted.slice(start, start + size)
            yield* offer({ _tag: "Records", records: yield* recordsWhere(tenantId, sql`a.tenant_id = ${tenantId} AND a.code = ANY(${codes}::text[])`) })
          }
        }))
    // Keyset: the primary key (tenant_id, code), or the filter's (tenant_id, <column>, code) index,
    // reads the page in order from the cursor's code on. Each row's multi-valued fields by key (a
    // page's hundred lookups; recordsWhere's aggregates over the whole tenant took 8 to 12 ms at
    // 50x), in recordsWhere's columns, decoded by hand as the whole list is: a page of 100 through
    // the schemas cost more than its statement.
    const listedAfter = (tenantId: string, filters: ApplicationFilters, after: string | null, limit: number) =>
      raw<ApplicationSqlRow>`
        ${select}
        WHERE ${sql.and([...filterClauses(tenantId, filters), ...(after === null ? [] : [sql`a.code > ${after}`])])}
        ORDER BY a.code
        LIMIT ${limit}`.pipe(Effect.map((rows) => rows.map(applicationRecordOf)))
    // One application, as a page's are read: every PUT reads the one it replaces.
    const byCode = ({ code, tenantId }: { readonly tenantId: string; readonly code: string }) =>
      raw<ApplicationSqlRow>`${select} WHERE a.tenant_id = ${tenantId} AND a.code = ${code}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), applicationRecordOf))
      )
    const ancestors = SqlSchema.findAll({
      Request: TenantAndCode,
      Result: Schema.Struct({ code: Schema.String }),
      execute: ({ code, tenantId }) =>
        sql`
          WITH RECURSIVE up (code, parent_code, depth) AS (
            SELECT code, parent_code, 0 FROM referential.applications WHERE tenant_id = ${tenantId} AND code = ${code}
            UNION ALL
            SELECT a.code, a.parent_code, up.depth + 1
            FROM referential.applications a JOIN up ON a.tenant_id = ${tenantId} AND a.code = up.parent_code
          )
          SELECT code FROM up WHERE depth > 0 ORDER BY depth`
    })
    const counted = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (tenantId) => sql`SELECT count(*) AS n FROM referential.applications WHERE tenant_id = ${tenantId}`
    })
    // Posi's half that only writes of applications move (the tree is the other), against what the
    // caller holds: the versions of the applications written since (below), then those not held at
    // that version (five short columns, decoded by hand as the whole list is), those its first
    // piece shows first, all from one snapshot.
    const linkedRows = (tenantId: string, which: Statement.Fragment) =>
      raw<LinkedApplicationSqlRow>`
        SELECT a.code, a.name, a.parent_code, p.name AS parent_name, a.criticality::text AS criticality,
          a.revision, p.revision AS parent_revision
        FROM referential.applications a
        LEFT JOIN referential.applications p ON p.tenant_id = a.tenant_id AND p.code = a.parent_code
        WHERE a.tenant_id = ${tenantId} AND ${which}`
    const linkedOfRows = (rows: ReadonlyArray<LinkedApplicationSqlRow>) =>
      rows.map((row) => ({ application: linkedApplicationOf(row), version: versionOf(row) }))
    // The codes as one array parameter: hundreds of parameters cost more to parse and plan.
    const linkedOf = (tenantId: string, codes: ReadonlyArray<string>) => Effect.map(linkedRows(tenantId, sql`a.code = ANY(${codes}::text[])`), linkedOfRows)
    // The tenant's greatest write sequence: the index's last entry for it (Migrations.ts, 0008).
    const writeSeqOf = (tenantId: string) =>
      raw<{ readonly write_seq: number | string }>`
        SELECT COALESCE(max(write_seq), 0) AS write_seq FROM referential.applications WHERE tenant_id = ${tenantId}`.pipe(
        Effect.map((rows) => Number(rows[0]!.write_seq))
      )
    // The versions of the applications written after `since`, and of their children (whose
    // parent's name is in their links): after a write of one application, its row and its
    // children's by index, where asking every application's version read 10,000 rows at 50x, 25 to
    // 110 ms of each posi after a write (docs/architecture.md, "The read path").
    const versionsMovedSince = (tenantId: string, since: number) =>
      raw<Pick<LinkedApplicationSqlRow, "code" | "revision" | "parent_revision">>`
        WITH written AS (
          SELECT code FROM referential.applications WHERE tenant_id = ${tenantId} AND write_seq > ${since}
        ), moved AS (
          SELECT code FROM written
          UNION
          SELECT c.code FROM referential.applications c
          JOIN written w ON c.tenant_id = ${tenantId} AND c.parent_code IS NOT NULL AND c.parent_code = w.code
        )
        SELECT a.code, a.revision, p.revision AS parent_revision
        FROM moved m
        JOIN referential.applications a ON a.tenant_id = ${tenantId} AND a.code = m.code
        LEFT JOIN referential.applications p ON p.tenant_id = a.tenant_id AND p.code = a.parent_code`.pipe(
        Effect.map((rows) => rows.map((row) => ({ code: row.code, version: versionOf(row) })))
      )
    const linkedChanged = (tenantId: string, first: ReadonlyArray<string>, holding: HeldLinked | undefined) =>
      fromOneSnapshot<ListedLinked>(sql, (offer) =>
        Effect.gen(function*() {
          // The applications `which` selects through a cursor, a batch at a time (OneSnapshot.ts).
          const linkedInBatches = (which: Statement.Fragment) =>
            inBatches<LinkedApplicationSqlRow>(sql, "linked", linkedRows(tenantId, which), (rows) => offer({ _tag: "Linked", applications: linkedOfRows(rows) }))
          const writeSeq = yield* writeSeqOf(tenantId)
          yield* offer({ _tag: "WriteSeq", writeSeq })
          if (holding === undefined || writeSeq < holding.writeSeq) {
            // Nothing held: every application, the named ones first.
            if (first.length > 0) yield* offer({ _tag: "Linked", applications: yield* linkedOf(tenantId, first) })
            yield* linkedInBatches(first.length === 0 ? sql`TRUE` : sql`a.code <> ALL(${first}::text[])`)
            return
          }
          const versions = writeSeq === holding.writeSeq ? [] : yield* versionsMovedSince(tenantId, holding.writeSeq)
          yield* offer({ _tag: "Versions", versions })
          const wanted = versions.filter((entry) => !holding.held(entry.code, entry.version)).map((entry) => entry.code)
          // Those posi's first piece shows, first; then the others (many after a bulk write).
          const named = new Set(first)
          const early = wanted.filter((code) => named.has(code))
          const late = wanted.filter((code) => !named.has(code))
          if (early.length > 0) yield* offer({ _tag: "Linked", applications: yield* linkedOf(tenantId, early) })
          if (late.length > 0) yield* linkedInBatches(sql`a.code = ANY(${late}::text[])`)
        }))
    // The statistics' half that only writes of applications move (the other is FunctionRepositoryPg's),
    // read again after each of them: the tallies the writes keep (Migrations.ts, 0007), a dozen rows
    // by the primary key. Counting the tenant's rows instead took 16-18 ms at 10,000 applications.
    const tallies = SqlSchema.findAll({
      Request: Schema.String,
      Result: TallyRow,
      execute: (tenantId) => sql`SELECT dimension, value, n::int AS n FROM referential.application_tallies WHERE tenant_id = ${tenantId} AND n > 0`
    })
    // The cursor names the last entry by its time and id; its `seq`, which breaks ties of time,
    // is read from that row, so that the cursor carries nothing but what the caller was shown.
    // `application_changes_newest` serves the order and the row comparison. Whether the
    // application exists comes in the same statement: its row, joined to its entries or to one
    // row of NULLs when it has none; no row at all when it does not exist. Decoded by hand
    // (Rows.ts, `changeOf`).
    const changes = (tenantId: string, code: string, limit: number, after: ChangePosition | undefined) =>
      raw<ChangeSqlRow | { readonly id: null }>`
        SELECT c.id, c.application_code, c.field, c.old_value, c.new_value, c.changed_by,
          ${sql.unsafe(millisOf("c.changed_at"))} AS changed_at_ms
        FROM referential.applications a
        LEFT JOIN LATERAL (
          SELECT e.id, e.application_code, e.field, e.old_value, e.new_value, e.changed_by, e.changed_at, e.seq
          FROM referential.application_changes e
          WHERE e.tenant_id = ${tenantId} AND e.application_code = ${code}
            ${after === undefined ? sql`` : sql`AND (e.changed_at, e.seq) < (${new Date(after.changedAtMillis)}, (
              SELECT p.seq FROM referential.application_changes p
              WHERE p.tenant_id = ${tenantId} AND p.application_code = ${code} AND p.id = ${after.id}
            ))`}
          ORDER BY e.changed_at DESC, e.seq DESC
          LIMIT ${limit}
        ) c ON true
        WHERE a.tenant_id = ${tenantId} AND a.code = ${code}
        ORDER BY c.changed_at DESC, c.seq DESC`

    return ApplicationRepository.of({
      list: (tenantId, filters, page) => listedAfter(tenantId, filters, Option.getOrNull(page.after), page.limit).pipe(Effect.orDie),
      listAllChanged: changedSince,
      find: (tenantId, code) => byCode({ tenantId, code }).pipe(Effect.orDie),
      exists: (tenantId, code) =>
        raw<{ readonly found: boolean }>`SELECT EXISTS (SELECT 1 FROM referential.applications WHERE tenant_id = ${tenantId} AND code = ${code}) AS found`.pipe(
          Effect.map((rows) => rows[0]?.found === true),
          Effect.orDie
        ),
      ancestorCodes: (tenantId, code) => ancestors({ tenantId, code }).pipe(Effect.map((rows) => rows.map((row) => row.code)), Effect.orDie),
      count: (tenantId) => counted(tenantId).pipe(Effect.map((row) => row.n), Effect.orDie),
      listLinkedChanged: linkedChanged,
      counts: (tenantId) => tallies(tenantId).pipe(Effect.map(applicationCountsOf), Effect.orDie),

      insert: (tenantId, record) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO referential.applications ${sql.insert({ tenantId, ...columns(record) })}`
          yield* writeMultiValued(tenantId, [record])
        }).pipe(Effect.orDie),

      // A multi-valued field as it was is left alone: a write of a name or a description is then
      // three statements fewer in the tenant's locked transaction (a DELETE and an INSERT each).
      update: (tenantId, record, previous) =>
        Effect.gen(function*() {
          const { code: _code, createdAt: _createdAt, ...changed } = columns(record)
          yield* sql`UPDATE referential.applications SET ${sql.update(changed)} WHERE tenant_id = ${tenantId} AND code = ${record.code}`
          if (!sameValues(record.regulations, previous.regulations)) {
            yield* sql`DELETE FROM referential.application_regulations WHERE tenant_id = ${tenantId} AND application_code = ${record.code}`
            yield* writeRegulations(tenantId, [record])
          }
          if (!sameValues(record.roleAssignments, previous.roleAssignments)) {
            yield* sql`DELETE FROM referential.application_role_assignments WHERE tenant_id = ${tenantId} AND application_code = ${record.code}`
            yield* writeAssignments(tenantId, [record])
          }
        }).pipe(Effect.orDie),

      insertMany: (tenantId, records) =>
        Effect.gen(function*() {
          yield* insertInChunks("referential.applications", records.map((record) => ({ tenantId, ...columns(record) })))
          yield* writeMultiValued(tenantId, records)
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie),

      appendChanges: (tenantId, entries) =>
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
            changedAt: new Date(entry.changedAt.epochMilliseconds)
          }))
        ).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie),

      listChanges: (tenantId, code, limit, after) =>
        changes(tenantId, code, limit, after).pipe(
          Effect.map((rows) =>
            rows.length === 0 ? Option.none() : Option.some(rows.flatMap((row) => row.id === null ? [] : [changeOf(row)]))
          ),
          Effect.orDie
        )
    })
  })
)
