import { SqlClient, type SqlError, SqlSchema } from "@effect/sql"
import { Unavailable } from "@portfolio/domain"
import { PatRecord } from "../../domain/PatRecord.js"
import { PatStore } from "../../ports/PatStore.js"
import { DateTime, Effect, Layer, Option, Schema } from "effect"

/** A row as node-postgres reads it: the record, with its times as Dates. */
const Row = Schema.Struct({
  ...PatRecord.fields,
  createdAt: Schema.DateTimeUtcFromDate,
  expiresAt: Schema.DateTimeUtcFromDate,
  revokedAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  lastUsedAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
})
const IdRow = Schema.Struct({ id: Schema.UUID })

const unavailable = (operation: string) => (cause: SqlError.SqlError | unknown) =>
  Effect.logError(`personal access token store: ${operation} failed`, cause).pipe(
    Effect.zipRight(Effect.fail(new Unavailable({ detail: "The token store is unavailable; retry shortly." })))
  )

const toRecord = Option.map((row: typeof Row.Type) => new PatRecord(row, true))

export const PatStorePostgresLive = Layer.effect(
  PatStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const byHash = SqlSchema.findOne({
      Request: Schema.Uint8ArrayFromSelf,
      Result: Row,
      execute: (tokenHash) => sql`SELECT * FROM gateway.personal_access_tokens WHERE token_hash = ${Buffer.from(tokenHash)}`
    })
    const revoke = SqlSchema.findOne({
      Request: Schema.Struct({ selector: Schema.Union(Schema.Struct({ id: Schema.String }), Schema.Struct({ tokenHash: Schema.Uint8ArrayFromSelf })), at: Schema.DateFromSelf }),
      Result: Row,
      execute: ({ at, selector }) =>
        sql`
          UPDATE gateway.personal_access_tokens
          SET revoked_at = COALESCE(revoked_at, ${at})
          WHERE ${"id" in selector ? sql`id = ${selector.id}` : sql`token_hash = ${Buffer.from(selector.tokenHash)}`}
          RETURNING *`
    })
    const revokeHolder = SqlSchema.findAll({
      Request: Schema.Struct({ tenantId: Schema.String, userSub: Schema.String, createdBefore: Schema.DateFromSelf, at: Schema.DateFromSelf }),
      Result: IdRow,
      execute: ({ at, createdBefore, tenantId, userSub }) =>
        sql`
          UPDATE gateway.personal_access_tokens
          SET revoked_at = ${at}
          WHERE tenant_id = ${tenantId} AND user_sub = ${userSub}
            AND revoked_at IS NULL AND created_at < ${createdBefore}
          RETURNING id`
    })
    return PatStore.of({
      insert: (record) =>
        sql`
          INSERT INTO gateway.personal_access_tokens ${sql.insert({
            id: record.id,
            tokenHash: Buffer.from(record.tokenHash),
            tokenPrefix: record.tokenPrefix,
            tenantId: record.tenantId,
            userSub: record.userSub,
            email: record.email,
            role: record.role,
            scope: record.scope,
            createdAt: DateTime.toDateUtc(record.createdAt),
            expiresAt: DateTime.toDateUtc(record.expiresAt),
            revokedAt: record.revokedAt === null ? null : DateTime.toDateUtc(record.revokedAt),
            lastUsedAt: record.lastUsedAt === null ? null : DateTime.toDateUtc(record.lastUsedAt)
          })}
        `.pipe(Effect.asVoid, Effect.catchAll(unavailable("insert")), Effect.withSpan("PatStore.insert")),
      findByHash: (tokenHash) =>
        byHash(tokenHash).pipe(
          Effect.map(toRecord),
          Effect.catchAll(unavailable("lookup")),
          Effect.withSpan("PatStore.findByHash")
        ),
      revoke: (selector, at) =>
        revoke({ selector, at: DateTime.toDateUtc(at) }).pipe(
          Effect.map(toRecord),
          Effect.catchAll(unavailable("revoke")),
          Effect.withSpan("PatStore.revoke")
        ),
      markUsed: (id, at) =>
        sql`UPDATE gateway.personal_access_tokens SET last_used_at = GREATEST(last_used_at, ${DateTime.toDateUtc(at)}) WHERE id = ${id}`.pipe(
          Effect.asVoid,
          Effect.catchAll(unavailable("last-use update")),
          Effect.withSpan("PatStore.markUsed")
        ),
      revokeHolder: (holder, createdBefore, at) =>
        revokeHolder({ ...holder, createdBefore: DateTime.toDateUtc(createdBefore), at: DateTime.toDateUtc(at) }).pipe(
          Effect.map((rows) => rows.map((row) => row.id)),
          Effect.catchAll(unavailable("holder revocation")),
          Effect.withSpan("PatStore.revokeHolder")
        )
    })
  })
)
