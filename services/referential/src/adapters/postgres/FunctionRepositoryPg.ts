import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import type { FunctionFields, PlacedFunction } from "../../domain/FunctionRecord.js"
import type { KeysetRequest } from "@portfolio/platform/http"
import { FunctionRepository } from "../../ports/FunctionRepository.js"
import { Effect, Layer, Option, Schema } from "effect"
import { type FunctionFieldsSqlRow, FunctionFieldsRow, functionRecordOf, insertInChunks, LocatedFunctionRow, stampsOf } from "./Rows.js"
import { FunctionCounts } from "../../domain/ReferentialCounts.js"
import { fromOneSnapshot, inBatches } from "./OneSnapshot.js"


/** `LIKE` treats `%`, `_` and the escape character as wildcards; searched text must not. */
const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** A page of a list sorted by code, as the statements take it; `null`: the whole list. */
const Page = Schema.NullOr(Schema.Struct({ after: Schema.NullOr(Schema.String), limit: Schema.Int }))
type KeysetPage = NonNullable<typeof Page.Type>
const keysetPage = (page: KeysetRequest<string> | undefined): KeysetPage | null =>
  page === undefined ? null : { after: Option.getOrNull(page.after), limit: page.limit }

const encodeFields = Schema.encodeSync(FunctionFieldsRow)
const columns = (tenantId: string, fields: FunctionFields) => ({ tenantId, ...encodeFields(fields) })

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
     * A statement run with PostgreSQL's JIT compilation off, for the statements of `located` that
     * may be costed above `jit_above_cost`. A recursive walk is costed as ten rounds over ten
     * times its first rows, so a search matching a few thousand functions was estimated at
     * millions, and compiling it took longer than running it (docs/architecture.md, "The read
     * path"). Turning it off takes a transaction: three round trips more.
     */
    const withoutJit = <A, E, R>(statement: Effect.Effect<A, E, R>) =>
      sql.withTransaction(Effect.andThen(sql`SET LOCAL jit = off`, statement))

    /**
     * The functions matching `where` (a condition on `f`) with their paths. A page is cut first, in
     * the order of the (tenant_id, code) unique index, so that only its functions are walked. Each
     * then walks up to its root carrying its path, one parent at a time by its key: the `OFFSET 0`
     * keeps that step a lookup per row, where a join let the planner hash the whole tenant's
     * functions to walk a page of them.
     */
    const located = (tenantId: string, where: Statement.Fragment, page: KeysetPage | null) =>
      sql`
        WITH RECURSIVE matched AS (
          SELECT f.id, f.tenant_id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at
          FROM referential.functions f
          WHERE f.tenant_id = ${tenantId} AND ${where}
          ${page === null ? sql`` : sql`${page.after === null ? sql`` : sql`AND f.code > ${page.after}`} ORDER BY f.code LIMIT ${page.limit}`}
        ),
        up (origin, path, parent_id) AS (
          SELECT m.id, ARRAY[m.code], m.parent_id FROM matched m
          UNION ALL
          SELECT up.origin, p.code || up.path, p.parent_id
          FROM up CROSS JOIN LATERAL (
            SELECT p.code, p.parent_id FROM referential.functions p WHERE p.tenant_id = ${tenantId} AND p.id = up.parent_id OFFSET 0
          ) p
        )
        SELECT f.id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at, ${applicationCodes}, up.path
        FROM matched f JOIN up ON up.origin = f.id AND up.parent_id IS NULL
        ORDER BY f.code`

    const TenantAndId = Schema.Struct({ tenantId: Schema.String, id: Schema.String })
    /**
     * `costly`: the statement may be costed above `jit_above_cost` (many functions may match), so
     * it runs without JIT (`withoutJit`); otherwise it runs alone.
     */
    const locatedWhere = <I extends { readonly tenantId: string; readonly page?: KeysetPage | null }>(
      Request: Schema.Codec<I>,
      where: (request: I) => Statement.Fragment,
      { costly }: { readonly costly: boolean }
    ) =>
      SqlSchema.findAll({
        Request,
        Result: LocatedFunctionRow,
        execute: (request) => {
          const statement = located(request.tenantId, where(request), request.page ?? null)
          return costly ? withoutJit(statement) : statement
        }
      })
    // One row, costed far below `jit_above_cost`: a single statement.
    const locatedById = locatedWhere(TenantAndId, ({ id }) => sql`f.id = ${id}`, { costly: false })
    /** Each condition is served by its column's trigram index (migration 0006_function_search_trigrams). */
    const matching = locatedWhere(Schema.Struct({ tenantId: Schema.String, text: Schema.String, page: Page }), ({ text }) => {
      const pattern = likePattern(text)
      return sql`(f.code ILIKE ${pattern} ESCAPE '\\' OR f.name ILIKE ${pattern} ESCAPE '\\' OR f.description ILIKE ${pattern} ESCAPE '\\')`
    }, { costly: true })
    // The functions of one application are a few (3.7 links per application in the demo's shape):
    // the statement is costed at 860 to 3,400 at 1x to 50x (EXPLAIN, 2026-12-02), far below
    // `jit_above_cost`, and runs without the transaction that turning JIT off takes (three round
    // trips more).
    const linkedTo = locatedWhere(
      Schema.Struct({ tenantId: Schema.String, applicationCode: Schema.String, page: Page }),
      ({ applicationCode }) =>
        sql`EXISTS (
          SELECT 1 FROM referential.function_applications l
          WHERE l.tenant_id = f.tenant_id AND l.function_id = f.id AND l.application_code = ${applicationCode}
        )`,
      { costly: false }
    )

    /**
     * The whole forest in tree order, walked by the database: each function carries its place,
     * the UTF-8 bytes of its ancestors' codes and its own, each after a 0x00 byte (which no text
     * holds), so that places compare as the paths do (domain/FunctionForest.ts, `comparePaths`): a
     * parent before its subtree, siblings by code point. (Codes joined by a control character in
     * text sorted as fast, but would misplace a code holding that character; arrays of codes cost
     * a quarter more at 25,000 functions.) The links are read once and joined by hash, rather than
     * a correlated subquery per function (25,000 index probes at 25,000 functions); a function's
     * codes come as one comma-separated text (Rows.ts, `listOf`), not an array `pg` would parse.
     * Read through a cursor, a batch at a time: the forest is never whole in this process
     * (docs/architecture.md, "Forests walked, never assembled").
     */
    const walkRows = (tenantId: string) =>
      sql`
        WITH RECURSIVE walk AS (
          SELECT f.id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at, 1 AS level,
            convert_to(f.code, 'UTF8') AS place
          FROM referential.functions f
          WHERE f.tenant_id = ${tenantId} AND f.parent_id IS NULL
          UNION ALL
          SELECT f.id, f.code, f.name, f.description, f.parent_id, f.created_at, f.updated_at, w.level + 1,
            w.place || '\\x00'::bytea || convert_to(f.code, 'UTF8')
          FROM walk w JOIN referential.functions f ON f.tenant_id = ${tenantId} AND f.parent_id = w.id
        )
        SELECT w.id, w.code, w.name, w.description, w.parent_id, ${sql.unsafe(stampsOf("w"))}, w.level,
          COALESCE(l.codes, '') AS application_codes
        FROM walk w
        LEFT JOIN (
          SELECT function_id, string_agg(application_code, ',' ORDER BY application_code) AS codes
          FROM referential.function_applications WHERE tenant_id = ${tenantId}
          GROUP BY function_id
        ) l ON l.function_id = w.id
        ORDER BY w.place`
    // JIT off as for `located`; the sort in memory (7 MB at 25,000 functions), not on disk.
    const walk = (tenantId: string) =>
      fromOneSnapshot<ReadonlyArray<PlacedFunction>>(sql, (offer) =>
        Effect.gen(function*() {
          yield* sql`SELECT set_config('jit', 'off', true), set_config('work_mem', '32MB', true)`
          yield* inBatches<FunctionFieldsSqlRow & { readonly level: number; readonly application_codes: string }>(
            sql,
            "forest",
            walkRows(tenantId),
            (rows) => offer(rows.map((row) => ({ ...functionRecordOf(row), level: row.level })))
          )
        }))
    const byCode = SqlSchema.findOneOption({
      Request: Schema.Struct({ tenantId: Schema.String, code: Schema.String }),
      Result: FunctionFieldsRow,
      execute: ({ code, tenantId }) =>
        sql`
          SELECT id, code, name, description, parent_id, created_at, updated_at
          FROM referential.functions WHERE tenant_id = ${tenantId} AND code = ${code}`
    })
    const selfAndAncestors = SqlSchema.findAll({
      Request: TenantAndId,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, tenantId }) =>
        sql`
          WITH RECURSIVE up (id, parent_id) AS (
            SELECT id, parent_id FROM referential.functions WHERE tenant_id = ${tenantId} AND id = ${id}
            UNION ALL
            SELECT p.id, p.parent_id FROM up JOIN referential.functions p ON p.tenant_id = ${tenantId} AND p.id = up.parent_id
          )
          SELECT id FROM up`
    })
    const children = SqlSchema.findOne({
      Request: TenantAndId,
      Result: Schema.Struct({ found: Schema.Boolean }),
      execute: ({ id, tenantId }) =>
        sql`SELECT EXISTS (SELECT 1 FROM referential.functions WHERE tenant_id = ${tenantId} AND parent_id = ${id}) AS found`
    })
    const counted = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (tenantId) => sql`SELECT count(*) AS n FROM referential.functions WHERE tenant_id = ${tenantId}`
    })
    // The statistics' half that only writes of functions and links move (the other is
    // ApplicationRepositoryPg's), so that a write of an application does not count them again.
    const tallies = SqlSchema.findOne({
      Request: Schema.String,
      Result: FunctionCounts,
      execute: (tenantId) =>
        sql`
          WITH RECURSIVE tenant_functions AS (
            SELECT id, parent_id FROM referential.functions WHERE tenant_id = ${tenantId}
          ),
          depths (id, depth) AS (
            SELECT id, 1 FROM tenant_functions WHERE parent_id IS NULL
            UNION ALL
            SELECT c.id, d.depth + 1 FROM tenant_functions c JOIN depths d ON c.parent_id = d.id
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
            (SELECT count(*) FROM links) AS link_count,
            (SELECT count(DISTINCT application_code) FROM links) AS linked_application_count`
    })

    return FunctionRepository.of({
      walk,
      find: (tenantId, id) => locatedById({ tenantId, id }).pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])), Effect.orDie),
      findByCode: (tenantId, code) => byCode({ tenantId, code }).pipe(Effect.orDie),
      search: (tenantId, text, page) => matching({ tenantId, text, page: keysetPage(page) }).pipe(Effect.orDie),
      listByApplication: (tenantId, applicationCode, page) =>
        linkedTo({ tenantId, applicationCode, page: keysetPage(page) }).pipe(Effect.orDie),
      selfAndAncestorIds: (tenantId, id) => selfAndAncestors({ tenantId, id }).pipe(Effect.map((rows) => rows.map((row) => row.id)), Effect.orDie),
      hasChildren: (tenantId, id) => children({ tenantId, id }).pipe(Effect.map((row) => row.found), Effect.orDie),
      count: (tenantId) => counted(tenantId).pipe(Effect.map((row) => row.n), Effect.orDie),

      insert: (tenantId, fields) => sql`INSERT INTO referential.functions ${sql.insert(columns(tenantId, fields))}`.pipe(Effect.asVoid, Effect.orDie),

      update: (tenantId, fields) => {
        const { id: _id, tenantId: _tenant, createdAt: _createdAt, ...changed } = columns(tenantId, fields)
        return sql`UPDATE referential.functions SET ${sql.update(changed)} WHERE tenant_id = ${tenantId} AND id = ${fields.id}`.pipe(
          Effect.asVoid,
          Effect.orDie
        )
      },

      remove: (tenantId, id) =>
        sql`DELETE FROM referential.functions WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(Effect.asVoid, Effect.orDie),

      link: (tenantId, link) =>
        sql`
          INSERT INTO referential.function_applications ${sql.insert({ tenantId, ...link })}
          ON CONFLICT DO NOTHING`.pipe(Effect.asVoid, Effect.orDie),

      unlink: (tenantId, link) =>
        sql`
          DELETE FROM referential.function_applications
          WHERE tenant_id = ${tenantId} AND function_id = ${link.functionId} AND application_code = ${link.applicationCode}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),

      insertMany: (tenantId, functions) =>
        insertInChunks("referential.functions", functions.map((fields) => columns(tenantId, fields))).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.orDie
        ),

      insertLinks: (tenantId, links) =>
        insertInChunks("referential.function_applications", links.map((link) => ({ tenantId, ...link }))).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.orDie
        ),

      counts: (tenantId) => tallies(tenantId).pipe(Effect.orDie),

      // Autovacuum would analyse the tables and flush the trigram indexes' pending lists within a
      // minute or so; until then the planner reads a tenant's 25,000 new functions as a handful and
      // the search scans a pending list entry by entry.
      settleBulkLoad: Effect.gen(function*() {
        yield* sql`
          ANALYZE referential.applications, referential.application_regulations, referential.application_role_assignments,
            referential.functions, referential.function_applications`
        for (const column of ["code", "name", "description"]) {
          yield* sql`SELECT gin_clean_pending_list(${`referential.functions_${column}_trigrams`}::regclass)`
        }
      }).pipe(
        // The load has committed: a role that may not maintain these tables leaves it to autovacuum.
        Effect.catchCause((cause) => Effect.logWarning("could not analyse the referential's tables after a bulk load", cause))
      )
    })
  })
)
