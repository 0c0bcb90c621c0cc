import { SqlClient, SqlSchema } from "effect/sql"
import { Das } from "@portfolio/domain"
import { Effect, Layer, Option, Schema } from "effect"
import { DasRepository } from "../../ports/DasRepository.js"

const DasRow = Schema.Struct({
  ...Das.fields,
  createdAt: Schema.DateTimeUtcFromDate,
  submittedAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
})
const encodeRow = Schema.encodeSync(DasRow)

export const DasRepositoryPg = Layer.effect(
  DasRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const found = SqlSchema.findOneOption({
      Request: Schema.Struct({ tenantId: Schema.String, id: Schema.String }),
      Result: DasRow,
      execute: ({ id, tenantId }) =>
        sql`
          SELECT id, application_code, title, content, status, created_at, submitted_by, submitted_at
          FROM referential.das WHERE tenant_id = ${tenantId} AND id = ${id}`
    })
    return DasRepository.of({
      find: (tenantId, id) => found({ tenantId, id }).pipe(Effect.map(Option.map((row) => new Das(row))), Effect.orDie),
      insert: (tenantId, das) => {
        const row = encodeRow(das)
        return sql`
          INSERT INTO referential.das (tenant_id, id, application_code, title, content, status, created_at, submitted_by, submitted_at)
          VALUES (${tenantId}, ${row.id}, ${row.applicationCode}, ${row.title},
            ${row.content === null ? null : JSON.stringify(row.content)}::jsonb, ${row.status},
            ${row.createdAt}, ${row.submittedBy}, ${row.submittedAt})`.pipe(Effect.asVoid, Effect.orDie)
      },
      update: (tenantId, das) => {
        const row = encodeRow(das)
        return sql`
          UPDATE referential.das SET status = ${row.status}, submitted_by = ${row.submittedBy}, submitted_at = ${row.submittedAt}
          WHERE tenant_id = ${tenantId} AND id = ${row.id}`.pipe(Effect.asVoid, Effect.orDie)
      }
    })
  })
)
