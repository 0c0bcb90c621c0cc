import { SqlClient, SqlSchema } from "effect/sql"
import { WebhookEventKind } from "@portfolio/domain"
import { Effect, Layer, Option, Schema } from "effect"
import type { SubscriptionRecord } from "../../domain/Subscription.js"
import { SubscriptionRepository } from "../../ports/SubscriptionRepository.js"
import { SecretSealer } from "./SealedSecrets.js"
import { openTarget, TargetColumns } from "./SubscriptionRows.js"

const Row = Schema.Struct({
  ...TargetColumns.fields,
  id: Schema.String,
  description: Schema.String,
  kinds: Schema.NullOr(Schema.Array(WebhookEventKind)),
  disabledReason: Schema.NullOr(Schema.Literals(["manual", "consecutive_failures"])),
  consecutiveFailures: Schema.Number,
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})

const Columns = "id, tenant_id, url, description, kinds, state, disabled_reason, consecutive_failures, sealed_secret, sealed_previous_secret, previous_secret_expires_at, created_at, updated_at"

export const SubscriptionRepositoryPg = Layer.effect(
  SubscriptionRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sealer = yield* SecretSealer
    const table = sql("webhook_dispatcher.subscriptions")
    const columns = sql.unsafe(Columns)

    const toRecord = ({ consecutiveFailures, createdAt, description, disabledReason, kinds, updatedAt, ...row }: typeof Row.Type): SubscriptionRecord => ({
      ...openTarget(sealer, row.id, row),
      description,
      kinds,
      disabledReason,
      consecutiveFailures,
      createdAt,
      updatedAt
    })
    const one = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      SqlSchema.findOneOption({ Request: Schema.Void, Result: Row, execute: () => statement })(undefined).pipe(Effect.map(Option.map(toRecord)), Effect.orDie)
    const many = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      SqlSchema.findAll({ Request: Schema.Void, Result: Row, execute: () => statement })(undefined).pipe(Effect.map((rows) => rows.map(toRecord)), Effect.orDie)

    return SubscriptionRepository.of({
      insert: (s) =>
        Effect.flatMap(sealer.sealSecret(s.id, s.secret), (sealed) => sql`INSERT INTO ${table} (id, tenant_id, url, description, kinds, state, disabled_reason, consecutive_failures, sealed_secret, created_at, updated_at)
            VALUES (${s.id}, ${s.tenantId}, ${s.url}, ${s.description}, ${s.kinds === null ? null : JSON.stringify(s.kinds)}::jsonb, ${s.state},
                    ${s.disabledReason}, ${s.consecutiveFailures}, ${sealed}, ${s.createdAt}, ${s.updatedAt})`).pipe(Effect.asVoid, Effect.orDie),
      find: (id) => one(sql`SELECT ${columns} FROM ${table} WHERE id = ${id}`),
      listByTenant: (tenantId) => many(sql`SELECT ${columns} FROM ${table} WHERE tenant_id = ${tenantId} ORDER BY created_at, id`),
      update: (id, changes) =>
        one(sql`UPDATE ${table} SET
                  url = COALESCE(${changes.url ?? null}, url),
                  kinds = CASE WHEN ${changes.kinds !== undefined} THEN ${changes.kinds == null ? null : JSON.stringify(changes.kinds)}::jsonb ELSE kinds END,
                  description = COALESCE(${changes.description ?? null}, description),
                  updated_at = now()
                WHERE id = ${id} RETURNING ${columns}`),
      remove: (id) =>
        sql`DELETE FROM ${table} WHERE id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      setState: (id, state, reason) =>
        one(sql`UPDATE ${table} SET state = ${state}, disabled_reason = ${reason},
                  consecutive_failures = CASE WHEN ${state} = 'enabled' THEN 0 ELSE consecutive_failures END, updated_at = now()
                WHERE id = ${id} RETURNING ${columns}`),
      disableForFailures: (id) =>
        sql`UPDATE ${table} SET state = 'disabled', disabled_reason = 'consecutive_failures', updated_at = now()
            WHERE id = ${id} AND state = 'enabled' RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      rotateSecret: (id, secret, previousExpiresAt) =>
        Effect.flatMap(sealer.sealSecret(id, secret), (sealed) => one(sql`UPDATE ${table} SET
                  sealed_previous_secret = CASE WHEN ${previousExpiresAt !== null} THEN sealed_secret ELSE NULL END,
                  previous_secret_expires_at = ${previousExpiresAt},
                  sealed_secret = ${sealed}, updated_at = now()
                WHERE id = ${id} RETURNING ${columns}`)),
      oldestEnabled: () =>
        sql<{ readonly oldest: Date | null }>`SELECT min(created_at) AS oldest FROM ${table} WHERE state = 'enabled'`.pipe(
          Effect.map((rows) => Option.fromNullishOr(rows[0]?.oldest)),
          Effect.orDie
        )
    })
  })
)
