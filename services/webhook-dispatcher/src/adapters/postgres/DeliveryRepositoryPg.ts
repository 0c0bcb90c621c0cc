import { SqlClient, SqlSchema } from "@effect/sql"
import { DeliveryStatus, WebhookEventKind } from "@portfolio/domain"
import { Effect, Layer, Option, Schema } from "effect"
import { type ClaimedDelivery, DeliveryRepository, type DeliveryRecord } from "../../ports/DeliveryRepository.js"

const DeliveryRow = Schema.Struct({
  id: Schema.String,
  subscriptionId: Schema.String,
  eventId: Schema.String,
  eventType: WebhookEventKind,
  status: DeliveryStatus,
  failureReason: Schema.NullOr(Schema.Literal("attempts_exhausted", "subscription_disabled")),
  attempts: Schema.Number,
  nextAttemptAt: Schema.NullOr(Schema.DateFromSelf),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})

const ClaimRow = Schema.Struct({ ...DeliveryRow.fields, roundAttempts: Schema.Number, body: Schema.String, traceparent: Schema.NullOr(Schema.String) })

const AttemptRow = Schema.Struct({
  id: Schema.String,
  deliveryId: Schema.String,
  attempt: Schema.Number,
  startedAt: Schema.DateFromSelf,
  durationMs: Schema.Number,
  statusCode: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  responseBody: Schema.String
})

const Submission = Schema.Struct({ id: Schema.String, subscriptionId: Schema.String })

const DeliveryColumns = "d.id, d.subscription_id, d.event_id, e.type AS event_type, d.status, d.failure_reason, d.attempts, d.next_attempt_at, d.created_at, d.updated_at"

export const DeliveryRepositoryPg = Layer.effect(
  DeliveryRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deliveryColumns = sql.unsafe(DeliveryColumns)
    const decodeDeliveries = (rows: ReadonlyArray<unknown>) => Schema.decodeUnknown(Schema.Array(DeliveryRow))(rows)
    const submissions = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      SqlSchema.findAll({ Request: Schema.Void, Result: Submission, execute: () => statement })(undefined).pipe(Effect.orDie)
    const findDelivery = SqlSchema.findOne({
      Request: Schema.String,
      Result: DeliveryRow,
      execute: (id) => sql`SELECT ${deliveryColumns} FROM webhook_dispatcher.deliveries d JOIN webhook_dispatcher.events e ON e.id = d.event_id WHERE d.id = ${id}`
    })

    return DeliveryRepository.of({
      recordEvent: (event, subscriptionIds, newId) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO webhook_dispatcher.events (id, tenant_id, type, body, traceparent, created_at)
                     VALUES (${event.id}, ${event.tenantId}, ${event.type}, ${event.body}, ${event.traceparent}, ${event.createdAt})
                     ON CONFLICT (id) DO NOTHING`
          const rows = subscriptionIds.map((subscriptionId) => sql`(${newId()}::uuid, ${event.id}::uuid, ${subscriptionId}::uuid)`)
          return yield* submissions(sql`
            INSERT INTO webhook_dispatcher.deliveries (id, event_id, subscription_id, status, next_attempt_at)
            SELECT v.id, v.event_id, v.subscription_id, 'pending', now() FROM (VALUES ${sql.csv(rows)}) AS v (id, event_id, subscription_id)
            ON CONFLICT (event_id, subscription_id) DO NOTHING
            RETURNING id, subscription_id`)
        }).pipe(Effect.orDie),

      claim: (id, leaseMs) =>
        SqlSchema.findOne({
          Request: Schema.String,
          Result: ClaimRow,
          execute: () =>
            sql`UPDATE webhook_dispatcher.deliveries d SET lease_until = now() + ${leaseMs} * interval '1 millisecond'
                FROM webhook_dispatcher.events e
                WHERE d.id = ${id} AND e.id = d.event_id AND d.status = 'pending' AND d.next_attempt_at <= now()
                  AND (d.lease_until IS NULL OR d.lease_until < now())
                RETURNING ${deliveryColumns}, d.round_attempts, e.body, e.traceparent`
        })(id).pipe(
          Effect.map(Option.map((row): ClaimedDelivery => {
            const { body, roundAttempts, traceparent, ...delivery } = row
            return { delivery, roundAttempt: roundAttempts + 1, body, traceparent }
          })),
          Effect.orDie
        ),

      complete: (attempt, resolution, deliveryId) =>
        Effect.gen(function*() {
          if (attempt !== undefined) {
            yield* sql`INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
                       VALUES (${attempt.id}, ${attempt.deliveryId}, ${attempt.attempt}, ${attempt.startedAt}, ${attempt.durationMs},
                               ${attempt.statusCode}, ${attempt.error}, ${attempt.responseBody})`
          }
          const counted = attempt === undefined ? 0 : 1
          const status = resolution._tag === "Succeeded" ? "succeeded" : resolution._tag === "RetryAt" ? "pending" : "failed"
          yield* sql`UPDATE webhook_dispatcher.deliveries SET
                       status = ${status},
                       failure_reason = ${resolution._tag === "Failed" ? resolution.reason : null},
                       next_attempt_at = ${resolution._tag === "RetryAt" ? resolution.at : null},
                       attempts = attempts + ${counted}, round_attempts = round_attempts + ${counted},
                       lease_until = NULL, updated_at = now()
                     WHERE id = ${deliveryId}`
        }).pipe(Effect.orDie),

      failPending: (subscriptionId, reason) =>
        sql`UPDATE webhook_dispatcher.deliveries SET status = 'failed', failure_reason = ${reason}, next_attempt_at = NULL, updated_at = now()
            WHERE subscription_id = ${subscriptionId} AND status = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie),

      overdue: (graceMs, limit) =>
        submissions(sql`SELECT id, subscription_id FROM webhook_dispatcher.deliveries
                        WHERE status = 'pending' AND next_attempt_at <= now() - ${graceMs} * interval '1 millisecond'
                          AND (lease_until IS NULL OR lease_until < now())
                        ORDER BY next_attempt_at LIMIT ${limit}`),

      find: (id) => findDelivery(id).pipe(Effect.orDie),

      list: (subscriptionId, status, limit) =>
        sql`SELECT ${deliveryColumns} FROM webhook_dispatcher.deliveries d JOIN webhook_dispatcher.events e ON e.id = d.event_id
            WHERE d.subscription_id = ${subscriptionId} ${status === undefined ? sql`` : sql`AND d.status = ${status}`}
            ORDER BY d.created_at DESC, d.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeDeliveries), Effect.orDie),

      attempts: (deliveryId) =>
        SqlSchema.findAll({
          Request: Schema.String,
          Result: AttemptRow,
          execute: (id) =>
            sql`SELECT id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body
                FROM webhook_dispatcher.attempts WHERE delivery_id = ${id} ORDER BY attempt`
        })(deliveryId).pipe(Effect.orDie),

      redeliver: (id) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ readonly id: string; readonly inFlight: boolean }>`
            UPDATE webhook_dispatcher.deliveries d SET
              status = CASE WHEN in_flight THEN d.status ELSE 'pending' END,
              failure_reason = CASE WHEN in_flight THEN d.failure_reason ELSE NULL END,
              next_attempt_at = CASE WHEN in_flight THEN d.next_attempt_at ELSE now() END,
              round_attempts = CASE WHEN in_flight THEN d.round_attempts ELSE 0 END,
              updated_at = now()
            FROM (SELECT id, lease_until IS NOT NULL AND lease_until >= now() AS in_flight FROM webhook_dispatcher.deliveries WHERE id = ${id} FOR UPDATE) AS c
            WHERE d.id = c.id RETURNING d.id, c.in_flight`
          const row = rows[0]
          if (row === undefined) return Option.none()
          if (row.inFlight) return Option.some("in-flight" as const)
          return Option.map(yield* findDelivery(id), (d): DeliveryRecord | "in-flight" => d)
        }).pipe(Effect.orDie),

      recover: (subscriptionId, since) =>
        submissions(sql`UPDATE webhook_dispatcher.deliveries SET status = 'pending', failure_reason = NULL, next_attempt_at = now(),
                          round_attempts = 0, updated_at = now()
                        WHERE subscription_id = ${subscriptionId} AND status = 'failed' AND created_at >= ${since}
                        RETURNING id, subscription_id`)
    })
  })
)
