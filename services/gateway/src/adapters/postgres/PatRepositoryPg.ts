import { Uuid, trusted } from "@portfolio/domain"
import { SqlClient, SqlSchema } from "effect/sql"
import { PatRecord } from "../../domain/PatRecord.js"
import { storeUnavailable } from "./StoreFailures.js"
import { PatRepository } from "../../ports/PatRepository.js"
import { DateTime, Effect, Layer, Option, Schema } from "effect"

/** A row as node-postgres reads it: the record, with its times as Dates. */
const Row = Schema.Struct({
  ...PatRecord.fields,
  createdAt: Schema.DateTimeUtcFromDate,
  expiresAt: Schema.DateTimeUtcFromDate,
  revokedAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  lastUsedAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
})
const IdRow = Schema.Struct({ id: Uuid })
const Holder = Schema.Struct({ tenantId: Schema.String, userSub: Schema.String })

const unavailable = storeUnavailable("personal access token store", "token store")

const toRecord = Option.map((row: typeof Row.Type) => trusted(PatRecord, row))

export const PatRepositoryPg = Layer.effect(
  PatRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const byHash = SqlSchema.findOneOption({
      Request: Schema.Uint8Array,
      Result: Row,
      execute: (tokenHash) => sql`SELECT * FROM gateway.personal_access_tokens WHERE token_hash = ${Buffer.from(tokenHash)}`
    })
    const revoke = SqlSchema.findOneOption({
      Request: Schema.Struct({
        selector: Schema.Union([Schema.Struct({ id: Schema.String }), Schema.Struct({ tokenHash: Schema.Uint8Array })]),
        at: Schema.Date,
        holder: Schema.UndefinedOr(Holder)
      }),
      Result: Row,
      execute: ({ at, holder, selector }) =>
        sql`
          UPDATE gateway.personal_access_tokens
          SET revoked_at = COALESCE(revoked_at, ${at})
          WHERE ${"id" in selector ? sql`id = ${selector.id}` : sql`token_hash = ${Buffer.from(selector.tokenHash)}`}
            ${holder === undefined ? sql`` : sql`AND tenant_id = ${holder.tenantId} AND user_sub = ${holder.userSub}`}
          RETURNING *`
    })
    const listActive = SqlSchema.findAll({
      Request: Schema.Struct({ ...Holder.fields, now: Schema.Date }),
      Result: Row,
      execute: ({ now, tenantId, userSub }) =>
        sql`
          SELECT * FROM gateway.personal_access_tokens
          WHERE tenant_id = ${tenantId} AND user_sub = ${userSub} AND revoked_at IS NULL AND expires_at > ${now}
          ORDER BY created_at DESC, id`
    })
    const revokeHolder = SqlSchema.findAll({
      Request: Schema.Struct({ tenantId: Schema.String, userSub: Schema.String, createdBefore: Schema.Date, at: Schema.Date }),
      Result: IdRow,
      execute: ({ at, createdBefore, tenantId, userSub }) =>
        sql`
          UPDATE gateway.personal_access_tokens
          SET revoked_at = ${at}
          WHERE tenant_id = ${tenantId} AND user_sub = ${userSub}
            AND revoked_at IS NULL AND created_at < ${createdBefore}
          RETURNING id`
    })
    return PatRepository.of({
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
        `.pipe(Effect.asVoid, Effect.catch(unavailable("insert")), Effect.withSpan("PatRepository.insert")),
      findByHash: (tokenHash) =>
        byHash(tokenHash).pipe(
          Effect.map(toRecord),
          Effect.catch(unavailable("lookup")),
          Effect.withSpan("PatRepository.findByHash")
        ),
      revoke: (selector, at, holder) =>
        revoke({ selector, at: DateTime.toDateUtc(at), holder }).pipe(
          Effect.map(toRecord),
          Effect.catch(unavailable("revoke")),
          Effect.withSpan("PatRepository.revoke")
        ),
      listActive: (holder, now) =>
        listActive({ ...holder, now: DateTime.toDateUtc(now) }).pipe(
          Effect.map((rows) => rows.map((row) => trusted(PatRecord, row))),
          Effect.catch(unavailable("holder's tokens lookup")),
          Effect.withSpan("PatRepository.listActive")
        ),
      markUsed: (id, at) =>
        sql`UPDATE gateway.personal_access_tokens SET last_used_at = GREATEST(last_used_at, ${DateTime.toDateUtc(at)}) WHERE id = ${id}`.pipe(
          Effect.asVoid,
          Effect.catch(unavailable("last-use update")),
          Effect.withSpan("PatRepository.markUsed")
        ),
      revokeHolder: (holder, createdBefore, at) =>
        revokeHolder({ ...holder, createdBefore: DateTime.toDateUtc(createdBefore), at: DateTime.toDateUtc(at) }).pipe(
          Effect.map((rows) => rows.map((row) => row.id)),
          Effect.catch(unavailable("holder revocation")),
          Effect.withSpan("PatRepository.revokeHolder")
        )
    })
  })
)
