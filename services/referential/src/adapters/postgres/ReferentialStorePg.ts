import { SqlClient, SqlError } from "@effect/sql"
import { ReferentialStore } from "../../ports/ReferentialStore.js"
import { Effect, Layer } from "effect"

export const ReferentialStorePg = Layer.effect(
  ReferentialStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The upsert takes the row lock of the tenant's revision first, so a tenant's writers queue
    // here and each one's checks (codes free, no cycle) see the previous writer's commit.
    const bump = (tenantId: string) =>
      sql`
        INSERT INTO referential.tenant_revisions (tenant_id, revision) VALUES (${tenantId}, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET revision = referential.tenant_revisions.revision + 1`
    return ReferentialStore.of({
      write: (tenantId, effect) =>
        sql.withTransaction(Effect.zipRight(Effect.orDie(bump(tenantId)), effect)).pipe(
          Effect.catchIf((error): error is SqlError.SqlError => error instanceof SqlError.SqlError, Effect.die)
        ),
      revision: (tenantId) =>
        sql<{ revision: number }>`SELECT revision FROM referential.tenant_revisions WHERE tenant_id = ${tenantId}`.pipe(
          Effect.map((rows) => rows[0]?.revision ?? 0),
          Effect.orDie
        )
    })
  })
)
