import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Option, Schema } from "effect"
import { TenantRevisions } from "../../ports/TenantRevisions.js"

export const TenantRevisionsPg = Layer.effect(
  TenantRevisions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const revisionOf = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ revision: Schema.Number }),
      execute: (tenantId) => sql`SELECT revision FROM referential.tenant_revisions WHERE tenant_id = ${tenantId}`
    })
    const revisionsOf = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ tenantId: Schema.String, revision: Schema.Number }),
      execute: (tenantIds) => sql`SELECT tenant_id, revision FROM referential.tenant_revisions WHERE tenant_id IN ${sql.in(tenantIds)}`
    })
    return TenantRevisions.of({
      // The upsert takes the row lock of the tenant's revision until the transaction ends: the
      // tenant's writers queue here, each one after the previous one's commit.
      bump: (tenantId) =>
        sql`
          INSERT INTO referential.tenant_revisions (tenant_id, revision) VALUES (${tenantId}, 1)
          ON CONFLICT (tenant_id) DO UPDATE SET revision = referential.tenant_revisions.revision + 1`.pipe(Effect.asVoid, Effect.orDie),
      current: (tenantId) =>
        revisionOf(tenantId).pipe(Effect.map(Option.match({ onNone: () => 0, onSome: (row) => row.revision })), Effect.orDie),
      currentOf: (tenantIds) =>
        tenantIds.length === 0
          ? Effect.succeed(new Map())
          : revisionsOf(tenantIds).pipe(Effect.map((rows) => new Map(rows.map((row) => [row.tenantId, row.revision]))), Effect.orDie)
    })
  })
)
