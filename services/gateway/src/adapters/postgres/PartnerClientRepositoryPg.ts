import { trusted } from "@portfolio/domain"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"
import type { Unavailable } from "@portfolio/domain"
import { isUniqueViolation } from "@portfolio/platform/sql"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { PartnerClientRecord } from "../../domain/PartnerClient.js"
import { ClientIdTaken, PartnerClientRepository, PartnerNameTaken } from "../../ports/PartnerClientRepository.js"
import { storeUnavailable } from "./StoreFailures.js"

/** A row as node-postgres reads it: the record, with its times as Dates and its hashes as Buffers. */
const Row = Schema.Struct({
  ...PartnerClientRecord.fields,
  previousSecretExpiresAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  disabledAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  createdAt: Schema.DateTimeUtcFromDate,
  updatedAt: Schema.DateTimeUtcFromDate
})

const unavailable = storeUnavailable("partner client store", "partner client store")

const toRecord = (row: typeof Row.Type) => trusted(PartnerClientRecord, row)
const date = (at: DateTime.Utc | null) => (at === null ? null : DateTime.toDateUtc(at))
const bytes = (hash: Uint8Array | null) => (hash === null ? null : Buffer.from(hash))

export const PartnerClientRepositoryPg = Layer.effect(
  PartnerClientRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const find = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Row,
      execute: (clientId) => sql`SELECT * FROM gateway.partner_clients WHERE client_id = ${clientId}`
    })
    const listByTenant = SqlSchema.findAll({
      Request: Schema.String,
      Result: Row,
      execute: (tenantId) => sql`SELECT * FROM gateway.partner_clients WHERE tenant_id = ${tenantId} ORDER BY created_at, client_id`
    })
    const updated = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>) =>
      Effect.flatMap(statement, (rows) => (rows.length === 0 ? Effect.succeedNone : Effect.map(Schema.decodeUnknownEffect(Row)(rows[0]), (row) => Option.some(toRecord(row)))))
    return PartnerClientRepository.of({
      insert: (record) =>
        sql`
          INSERT INTO gateway.partner_clients ${sql.insert({
            clientId: record.clientId,
            tenantId: record.tenantId,
            name: record.name,
            scope: record.scope,
            secretHash: Buffer.from(record.secretHash),
            previousSecretHash: bytes(record.previousSecretHash),
            previousSecretExpiresAt: date(record.previousSecretExpiresAt),
            disabledAt: date(record.disabledAt),
            createdAt: DateTime.toDateUtc(record.createdAt),
            updatedAt: DateTime.toDateUtc(record.updatedAt)
          })}
        `.pipe(
          Effect.asVoid,
          Effect.catch((cause): Effect.Effect<never, PartnerNameTaken | ClientIdTaken | Unavailable> =>
            isUniqueViolation(cause, "partner_clients_tenant_name")
              ? Effect.fail(new PartnerNameTaken({ name: record.name }))
              : isUniqueViolation(cause, "partner_clients_pkey")
              ? Effect.fail(new ClientIdTaken({ clientId: record.clientId }))
              : unavailable("insert")(cause)
          ),
          Effect.withSpan("PartnerClientRepository.insert")
        ),
      find: (clientId) =>
        find(clientId).pipe(Effect.map(Option.map(toRecord)), Effect.catch(unavailable("lookup")), Effect.withSpan("PartnerClientRepository.find")),
      listByTenant: (tenantId) =>
        listByTenant(tenantId).pipe(
          Effect.map((rows) => rows.map(toRecord)),
          Effect.catch(unavailable("list")),
          Effect.withSpan("PartnerClientRepository.listByTenant")
        ),
      changeSecret: (clientId, change) =>
        updated(sql`
          UPDATE gateway.partner_clients
          SET secret_hash = ${Buffer.from(change.secretHash)},
              previous_secret_hash = ${bytes(change.previous?.secretHash ?? null)},
              previous_secret_expires_at = ${date(change.previous?.expiresAt ?? null)},
              updated_at = ${DateTime.toDateUtc(change.at)}
          WHERE client_id = ${clientId}
          RETURNING *`).pipe(Effect.catch(unavailable("secret change")), Effect.withSpan("PartnerClientRepository.changeSecret")),
      setDisabled: (clientId, at, updatedAt) =>
        updated(sql`
          UPDATE gateway.partner_clients
          SET disabled_at = ${at === null ? null : sql`COALESCE(disabled_at, ${DateTime.toDateUtc(at)})`},
              updated_at = ${DateTime.toDateUtc(updatedAt)}
          WHERE client_id = ${clientId}
          RETURNING *`).pipe(Effect.catch(unavailable("state change")), Effect.withSpan("PartnerClientRepository.setDisabled"))
    })
  })
)
