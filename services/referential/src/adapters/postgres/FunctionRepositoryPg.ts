import { SqlClient, type Statement } from "@effect/sql"
import {
  EnrichedFunctionRecord,
  type FunctionFields,
  FunctionRecord,
  LocatedFunction
} from "../../domain/FunctionRecord.js"
import { FunctionRepository } from "../../ports/FunctionRepository.js"
import { Effect, Layer, Option, Schema } from "effect"
import { decodeRows, insertInChunks, orDie } from "./Rows.js"

const fromDates = { createdAt: Schema.DateTimeUtcFromDate, updatedAt: Schema.DateTimeUtcFromDate }
const decodeFunctions = decodeRows(Schema.Struct({ ...FunctionRecord.fields, ...fromDates }))
const decodeEnriched = decodeRows(Schema.Struct({ ...EnrichedFunctionRecord.fields, ...fromDates }))
const decodeLocated = decodeRows(Schema.Struct({ ...LocatedFunction.fields, ...fromDates }))

const Breakdown = Schema.Array(Schema.Struct({ value: Schema.String, n: Schema.Number }))
const CountsRow = Schema.Struct({
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
const decodeCounts = decodeRows(CountsRow)
const toRecord = (pairs: typeof Breakdown.Type) => Object.fromEntries(pairs.map((pair) => [pair.value, pair.n]))

/** `LIKE` treats `%`, `_` and the escape character as wildcards; searched text must not. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const columns = (tenantId: string, fields: FunctionFields) => ({
  id: fields.id,
  tenantId,
  code: fields.code,
  name: fields.name,
  description: fields.description,
  parentId: fields.parentId,
  createdAt: new Date(fields.createdAt.epochMillis),
  updatedAt: new Date(fields.updatedAt.epochMillis)
})

export const FunctionRepositoryPg = Layer.effect(
  FunctionRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const applicationCodes = sql`
      ARRAY(
        SELECT l.application_code FROM referential.function_applications l
        WHERE l.tenant_id = f.tenant_id AND l.function_id = f.id ORDER BY l.application_code
      ) AS application_codes`

    /**
     * The functions matching `where` (a condition on `f`) with their paths: one recursive walk
     * up from all of them at once, aggregated per starting function.
     */
    const located = (tenantId: string, where: Statement.Fragment) =>
      sql`
        WITH RECURSIVE matched AS (
          SELECT f.id, f.tenant_id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at
          FROM referential.functions f
          WHERE f.tenant_id = ${tenantId} AND ${where}
        ),
        up (origin, code, parent_id, depth) AS (
          SELECT m.id, m.code, m.parent_id, 0 FROM matched m
          UNION ALL
          SELECT up.origin, p.code, p.parent_id, up.depth + 1
          FROM up JOIN referential.functions p ON p.tenant_id = ${tenantId} AND p.id = up.parent_id
        ),
        paths AS (SELECT origin, array_agg(code ORDER BY depth DESC) AS path FROM up GROUP BY origin)
        SELECT f.id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at, ${applicationCodes}, paths.path
        FROM matched f JOIN paths ON paths.origin = f.id
        ORDER BY f.code`.pipe(Effect.map(decodeLocated), orDie)

    return FunctionRepository.of({
      listAll: (tenantId) =>
        sql`
          SELECT f.id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at, ${applicationCodes}
          FROM referential.functions f WHERE f.tenant_id = ${tenantId}`.pipe(Effect.map(decodeFunctions), orDie),

      listAllEnriched: (tenantId) =>
        sql`
          SELECT f.id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at,
            COALESCE((
              SELECT json_agg(json_build_object(
                'code', a.code, 'name', a.name, 'parentCode', a.parent_code, 'parentName', p.name, 'criticality', a.criticality
              ) ORDER BY a.code)
              FROM referential.function_applications l
              JOIN referential.applications a ON a.tenant_id = l.tenant_id AND a.code = l.application_code
              LEFT JOIN referential.applications p ON p.tenant_id = a.tenant_id AND p.code = a.parent_code
              WHERE l.tenant_id = f.tenant_id AND l.function_id = f.id
            ), '[]'::json) AS applications
          FROM referential.functions f WHERE f.tenant_id = ${tenantId}`.pipe(Effect.map(decodeEnriched), orDie),

      find: (tenantId, id) => Effect.map(located(tenantId, sql`f.id = ${id}`), (rows) => Option.fromNullable(rows[0])),

      findByCode: (tenantId, code) =>
        sql`
          SELECT f.id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at, ${applicationCodes}
          FROM referential.functions f WHERE f.tenant_id = ${tenantId} AND f.code = ${code}`.pipe(
          Effect.map((rows) => Option.fromNullable(decodeFunctions(rows)[0])),
          orDie
        ),

      search: (tenantId, text) => {
        const pattern = likePattern(text)
        return located(
          tenantId,
          sql`(f.code ILIKE ${pattern} ESCAPE '\\' OR f.name ILIKE ${pattern} ESCAPE '\\' OR f.description ILIKE ${pattern} ESCAPE '\\')`
        )
      },

      listByApplication: (tenantId, applicationCode) =>
        located(
          tenantId,
          sql`EXISTS (
            SELECT 1 FROM referential.function_applications l
            WHERE l.tenant_id = f.tenant_id AND l.function_id = f.id AND l.application_code = ${applicationCode}
          )`
        ),

      selfAndAncestorIds: (tenantId, id) =>
        sql<{ id: string }>`
          WITH RECURSIVE up (id, parent_id) AS (
            SELECT id, parent_id FROM referential.functions WHERE tenant_id = ${tenantId} AND id = ${id}
            UNION ALL
            SELECT p.id, p.parent_id FROM up JOIN referential.functions p ON p.tenant_id = ${tenantId} AND p.id = up.parent_id
          )
          SELECT id FROM up`.pipe(Effect.map((rows) => rows.map((row) => row.id)), orDie),

      hasChildren: (tenantId, id) =>
        sql<{ found: boolean }>`
          SELECT EXISTS (SELECT 1 FROM referential.functions WHERE tenant_id = ${tenantId} AND parent_id = ${id}) AS found`.pipe(
          Effect.map((rows) => rows[0]?.found === true),
          orDie
        ),

      count: (tenantId) =>
        sql<{ n: number }>`SELECT count(*) AS n FROM referential.functions WHERE tenant_id = ${tenantId}`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          orDie
        ),

      insert: (tenantId, fields) => sql`INSERT INTO referential.functions ${sql.insert(columns(tenantId, fields))}`.pipe(Effect.asVoid, orDie),

      update: (tenantId, fields) => {
        const { id: _id, tenantId: _tenant, createdAt: _createdAt, ...changed } = columns(tenantId, fields)
        return sql`UPDATE referential.functions SET ${sql.update(changed)} WHERE tenant_id = ${tenantId} AND id = ${fields.id}`.pipe(
          Effect.asVoid,
          orDie
        )
      },

      remove: (tenantId, id) =>
        sql`DELETE FROM referential.functions WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(Effect.asVoid, orDie),

      link: (tenantId, link) =>
        sql`
          INSERT INTO referential.function_applications ${sql.insert({ tenantId, ...link })}
          ON CONFLICT DO NOTHING`.pipe(Effect.asVoid, orDie),

      unlink: (tenantId, link) =>
        sql`
          DELETE FROM referential.function_applications
          WHERE tenant_id = ${tenantId} AND function_id = ${link.functionId} AND application_code = ${link.applicationCode}`.pipe(
          Effect.asVoid,
          orDie
        ),

      insertMany: (tenantId, functions, links) =>
        Effect.gen(function*() {
          yield* insertInChunks("referential.functions", functions.map((fields) => columns(tenantId, fields)))
          yield* insertInChunks("referential.function_applications", links.map((link) => ({ tenantId, ...link })))
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql), orDie),

      counts: (tenantId) =>
        sql`
          WITH RECURSIVE tenant_functions AS (
            SELECT id, parent_id FROM referential.functions WHERE tenant_id = ${tenantId}
          ),
          depths (id, depth) AS (
            SELECT id, 1 FROM tenant_functions WHERE parent_id IS NULL
            UNION ALL
            SELECT c.id, d.depth + 1 FROM tenant_functions c JOIN depths d ON c.parent_id = d.id
          ),
          tenant_applications AS (
            SELECT code, criticality, data_classification, status FROM referential.applications WHERE tenant_id = ${tenantId}
          ),
          links AS (
            SELECT function_id, application_code FROM referential.function_applications WHERE tenant_id = ${tenantId}
          )
          SELECT
            (SELECT count(*) FROM tenant_functions) AS function_count,
            (SELECT count(*) FROM tenant_functions WHERE parent_id IS NULL) AS root_function_count,
            (SELECT COALESCE(max(depth), 0) FROM depths) AS max_depth,
            (SELECT count(*) FROM tenant_functions f WHERE NOT EXISTS (SELECT 1 FROM links l WHERE l.function_id = f.id))
              AS functions_without_application,
            (SELECT count(*) FROM tenant_applications) AS application_count,
            (SELECT count(*) FROM tenant_applications a WHERE NOT EXISTS (SELECT 1 FROM links l WHERE l.application_code = a.code))
              AS applications_without_function,
            (SELECT count(*) FROM links) AS link_count,
            (SELECT COALESCE(json_agg(json_build_object('value', v, 'n', n)), '[]'::json)
              FROM (SELECT criticality AS v, count(*) AS n FROM tenant_applications GROUP BY 1) x) AS applications_by_criticality,
            (SELECT COALESCE(json_agg(json_build_object('value', v, 'n', n)), '[]'::json)
              FROM (SELECT data_classification AS v, count(*) AS n FROM tenant_applications GROUP BY 1) x)
              AS applications_by_data_classification,
            (SELECT COALESCE(json_agg(json_build_object('value', v, 'n', n)), '[]'::json)
              FROM (SELECT status AS v, count(*) AS n FROM tenant_applications GROUP BY 1) x) AS applications_by_status`.pipe(
          Effect.map((rows) => {
            const row = decodeCounts(rows)[0]!
            return {
              ...row,
              applicationsByCriticality: toRecord(row.applicationsByCriticality),
              applicationsByDataClassification: toRecord(row.applicationsByDataClassification),
              applicationsByStatus: toRecord(row.applicationsByStatus)
            }
          }),
          orDie
        )
    })
  })
)
