import { trusted } from "@portfolio/domain"
import { SqlClient, SqlSchema } from "effect/sql"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { ScimTokenRecord } from "../../domain/ScimToken.js"
import { ScimTokenRepository } from "../../ports/ScimTokenRepository.js"
import { storeUnavailable } from "./StoreFailures.js"

/** A row as node-postgres reads it: the record, with its times as Dates. */
const Row = Schema.Struct({
  ...ScimTokenRecord.fields,
  createdAt: Schema.DateTimeUtcFromDate,
  lastUsedAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  revokedAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
})
const RevocationRow = Schema.Struct({ ...Row.fields, alreadyRevoked: Schema.Boolean })

const unavailable = storeUnavailable("SCIM token store", "token store")

const toRecord = (row: typeof Row.Type) => trusted(ScimTokenRecord, row)

export const ScimTokenRepositoryPg = Layer.effect(
  ScimTokenRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const byHash = SqlSchema.findOneOption({
      Request: Schema.Uint8Array,
      Result: Row,
      execute: (tokenHash) => sql`SELECT * FROM gateway.scim_tokens WHERE token_hash = ${Buffer.from(tokenHash)}`
    })
    const listByTenant = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (tenantId) =>
        sql`
          SELECT * FROM gateway.scim_tokens WHERE tenant_id = ${tenantId}
          ORDER BY revoked_at IS NOT NULL, created_at DESC, id`
    })
    // A transaction-scoped advisory lock per tenant serialises its creations, as the PAT requests'
    // filings are (PatRequestRepositoryPg): the count runs in a statement of its own once the lock
    // is granted, so that its snapshot holds what the previous creation committed.
    const lockTenant = (tenantId: string) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${`gateway-scim-tokens:${tenantId}`}, 0))`
    const activeOf = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (tenantId) => sql`SELECT count(*)::int AS n FROM gateway.scim_tokens WHERE tenant_id = ${tenantId} AND revoked_at IS NULL`
    })
    // The row is read locked, so that of two revocations the second sees the first's time and says so.
    const revoke = SqlSchema.findOneOption({
      Request: Schema.Struct({ tenantId: Schema.String, id: Schema.String, at: Schema.Date }),
      Result: RevocationRow,
      execute: ({ at, id, tenantId }) =>
        sql`
          WITH before AS (
            SELECT id, revoked_at FROM gateway.scim_tokens WHERE id = ${id} AND tenant_id = ${tenantId} FOR UPDATE
          )
          UPDATE gateway.scim_tokens AS t
          SET revoked_at = COALESCE(before.revoked_at, ${at})
          FROM before WHERE t.id = before.id
          RETURNING t.*, before.revoked_at IS NOT NULL AS already_revoked`
    })
    return ScimTokenRepository.of({
      insert: (record) =>
        sql`
          INSERT INTO gateway.scim_tokens ${sql.insert({
          id: record.id,
          tenantId: record.tenantId,
          label: record.label,
          tokenHash: Buffer.from(record.tokenHash),
          tokenPrefix: record.tokenPrefix,
          createdBy: record.createdBy,
          createdAt: DateTime.toDateUtc(record.createdAt),
          lastUsedAt: record.lastUsedAt === null ? null : DateTime.toDateUtc(record.lastUsedAt),
          revokedAt: record.revokedAt === null ? null : DateTime.toDateUtc(record.revokedAt)
        })}
        `.pipe(Effect.asVoid, Effect.catch(unavailable("insert")), Effect.withSpan("ScimTokenRepository.insert")),
      lockActiveOf: (tenantId) =>
        Effect.andThen(lockTenant(tenantId), activeOf(tenantId)).pipe(
          Effect.map((row) => row.n),
          Effect.catch(unavailable("count of active tokens")),
          Effect.withSpan("ScimTokenRepository.lockActiveOf")
        ),
      findByHash: (tokenHash) =>
        byHash(tokenHash).pipe(
          Effect.map(Option.map(toRecord)),
          Effect.catch(unavailable("lookup")),
          Effect.withSpan("ScimTokenRepository.findByHash")
        ),
      listByTenant: (tenantId) =>
        listByTenant(tenantId).pipe(
          Effect.map((rows) => rows.map(toRecord)),
          Effect.catch(unavailable("list")),
          Effect.withSpan("ScimTokenRepository.listByTenant")
        ),
      revoke: (tenantId, id, at) =>
        revoke({ tenantId, id, at: DateTime.toDateUtc(at) }).pipe(
          Effect.map(Option.map(({ alreadyRevoked, ...row }) => ({ token: toRecord(row), alreadyRevoked }))),
          Effect.catch(unavailable("revoke")),
          Effect.withSpan("ScimTokenRepository.revoke")
        ),
      markUsed: (id, at) =>
        sql`UPDATE gateway.scim_tokens SET last_used_at = GREATEST(last_used_at, ${DateTime.toDateUtc(at)}) WHERE id = ${id}`.pipe(
          Effect.asVoid,
          Effect.catch(unavailable("last-use update")),
          Effect.withSpan("ScimTokenRepository.markUsed")
        )
    })
  })
)
