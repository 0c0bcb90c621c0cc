import { SqlClient, SqlSchema, type Statement } from "effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { NeverWritten, type Scope, TenantRevisions } from "../../ports/TenantRevisions.js"

const Revisions = Schema.Struct({ applications: Schema.Number, functions: Schema.Number })

export const TenantRevisionsPg = Layer.effect(
  TenantRevisions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // A previous version (during a rollout or after a rollback, docs/architecture.md "Expand, then
    // contract") moves `revision` alone, on every write: a revision ahead of every scope's means
    // such a write, which may have changed anything, so every scope counts as moved then. Rows
    // written before the scopes existed (0 by default) read the same way.
    const scoped = sql`
      CASE WHEN revision > GREATEST(applications_revision, functions_revision) THEN revision ELSE applications_revision END AS applications,
      CASE WHEN revision > GREATEST(applications_revision, functions_revision) THEN revision ELSE functions_revision END AS functions`
    const revisionsOf = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Revisions,
      execute: (tenantId) => sql`SELECT ${scoped} FROM referential.tenant_revisions WHERE tenant_id = ${tenantId}`
    })
    const revisionsOfMany = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ tenantId: Schema.String, ...Revisions.fields }),
      // A row at 0 is a tenant whose writes all changed nothing (or nothing read): never written.
      execute: (tenantIds) =>
        sql`SELECT tenant_id, ${scoped} FROM referential.tenant_revisions WHERE tenant_id IN ${sql.in(tenantIds)} AND revision > 0`
    })
    // A scope that does not move keeps its value, or takes the revision of a previous version's
    // write not yet spread to the scopes (above), so that what it reads as stays the same.
    const stamp = (moves: boolean, kept: Statement.Fragment) =>
      moves ? sql`t.revision + 1` : sql`CASE WHEN t.revision > GREATEST(t.applications_revision, t.functions_revision) THEN t.revision ELSE ${kept} END`
    const move = (tenantId: string, scopes: ReadonlyArray<Scope>) => {
      const [applications, functions] = [scopes.includes("applications"), scopes.includes("functions")]
      // `revision` keeps moving with every write that changes something: the previous version reads it.
      return sql`
        INSERT INTO referential.tenant_revisions AS t (tenant_id, revision, applications_revision, functions_revision)
        VALUES (${tenantId}, 1, ${applications ? 1 : 0}, ${functions ? 1 : 0})
        ON CONFLICT (tenant_id) DO UPDATE SET
          revision = t.revision + 1,
          applications_revision = ${stamp(applications, sql`t.applications_revision`)},
          functions_revision = ${stamp(functions, sql`t.functions_revision`)}`
    }
    return TenantRevisions.of({
      // An upsert that changes nothing: unlike SELECT ... FOR UPDATE, it also locks the row of a
      // tenant never written (a concurrent first writer's insert makes it wait for that commit).
      // The row lock holds until the transaction ends, so the tenant's writers queue here, each
      // one after the previous one's commit.
      lock: (tenantId) =>
        sql`
          INSERT INTO referential.tenant_revisions (tenant_id, revision) VALUES (${tenantId}, 0)
          ON CONFLICT (tenant_id) DO UPDATE SET revision = referential.tenant_revisions.revision`.pipe(Effect.asVoid, Effect.orDie),
      moved: (tenantId, scopes) => scopes.length === 0 ? Effect.void : move(tenantId, scopes).pipe(Effect.asVoid, Effect.orDie),
      current: (tenantId) => revisionsOf(tenantId).pipe(Effect.map(Option.getOrElse(() => NeverWritten)), Effect.orDie),
      currentOf: (tenantIds) =>
        tenantIds.length === 0
          ? Effect.succeed(new Map())
          : revisionsOfMany(tenantIds).pipe(
            Effect.map((rows) => new Map(rows.map(({ tenantId, ...revisions }) => [tenantId, revisions]))),
            Effect.orDie
          )
    })
  })
)
