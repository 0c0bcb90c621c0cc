import type { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { AttemptRecord, FirstSuccess, ReceivedEvent } from "../../ports/DeliveryRepository.js"
import { makeStatementBatcher, MaxStatementRows } from "./StatementBatcher.js"

/**
 * A statement of successes at most every 2 ms under load: measured, writing each as soon as the
 * previous ended made statements of one or two rows, and PostgreSQL's per-statement work and the
 * socket writes a large part of a delivery's cost.
 */
const SuccessIntervalMs = 10

/**
 * Records successful attempts in batches (makeStatementBatcher): the attempts, their deliveries
 * settled, their subscriptions' failure counts reset. Failures are rarer and carry the
 * subscription's count back: they are written one by one (DeliveryRepositoryPg.complete).
 */
export const makeSuccessBatcher = (sql: SqlClient.SqlClient) =>
  makeStatementBatcher((batch: ReadonlyArray<{ readonly attempt: AttemptRecord; readonly subscriptionId: string }>) =>
    // The rows as one JSON parameter: one statement text whatever the batch's size, and no SQL
    // fragment to build per row (measured: those were a tenth of what a delivery allocated).
    sql`
      WITH batch AS (
        SELECT * FROM json_to_recordset(${JSON.stringify(batch.map(({ attempt, subscriptionId }) => ({ ...attempt, subscriptionId })))}::json)
          AS b(id uuid, "deliveryId" uuid, attempt int, "startedAt" timestamptz, "durationMs" int, "statusCode" int, error text,
               "responseBody" text, "subscriptionId" uuid)
      ), recorded AS (
        INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
        SELECT id, "deliveryId", attempt, "startedAt", "durationMs", "statusCode", error, "responseBody" FROM batch
      ), moved AS (
        UPDATE webhook_dispatcher.deliveries SET status = 'succeeded', failure_reason = NULL, next_attempt_at = NULL, lease_until = NULL,
          updated_at = now(), attempts = attempts + 1, round_attempts = round_attempts + 1
        WHERE id IN (SELECT "deliveryId" FROM batch)
      )
      UPDATE webhook_dispatcher.subscriptions SET consecutive_failures = 0
      WHERE id IN (SELECT "subscriptionId" FROM batch) AND consecutive_failures <> 0`.pipe(Effect.as(batch.map(() => undefined))), MaxStatementRows, { minIntervalMs: SuccessIntervalMs })

/**
 * Records first attempts that succeeded before anything of their deliveries was recorded, in
 * batches as above: their events (once each), their deliveries, succeeded, their attempts, their
 * subscriptions' failure counts reset. One write per delivery where recording it pending first
 * took an insert and an update of every index. A delivery recorded already (its event came back
 * after a crash) is left as it is, and its caller told so.
 */
export const makeFirstSuccessBatcher = (sql: SqlClient.SqlClient) => {
  const raw = sql.withoutTransforms()
  return makeStatementBatcher((batch: ReadonlyArray<FirstSuccess>) => {
    const events = new Map<string, ReceivedEvent>()
    for (const { event } of batch) events.set(event.id, event)
    return raw<{ readonly id: string }>`
      WITH batch AS (
        SELECT * FROM json_to_recordset(${JSON.stringify(batch.map(({ attempt, event, subscriptionId }) => ({ ...attempt, eventId: event.id, subscriptionId })))}::json)
          AS b(id uuid, "deliveryId" uuid, "eventId" uuid, "subscriptionId" uuid, attempt int, "startedAt" timestamptz, "durationMs" int,
               "statusCode" int, error text, "responseBody" text)
      ), kept AS (
        INSERT INTO webhook_dispatcher.events (id, tenant_id, type, body, traceparent, created_at)
        SELECT id, "tenantId", type, body, traceparent, "createdAt"
        FROM json_to_recordset(${JSON.stringify([...events.values()])}::json)
          AS e(id uuid, "tenantId" uuid, type text, body text, traceparent text, "createdAt" timestamptz)
        ON CONFLICT (id) DO NOTHING
      ), created AS (
        INSERT INTO webhook_dispatcher.deliveries (id, event_id, subscription_id, status, attempts, round_attempts)
        SELECT "deliveryId", "eventId", "subscriptionId", 'succeeded', 1, 1 FROM batch
        ON CONFLICT (event_id, subscription_id) DO NOTHING
        RETURNING id, subscription_id
      ), recorded AS (
        INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
        SELECT b.id, b."deliveryId", b.attempt, b."startedAt", b."durationMs", b."statusCode", b.error, b."responseBody"
        FROM batch b JOIN created c ON c.id = b."deliveryId"
      ), reset AS (
        UPDATE webhook_dispatcher.subscriptions SET consecutive_failures = 0
        WHERE id IN (SELECT subscription_id FROM created) AND consecutive_failures <> 0
      )
      SELECT id FROM created`.pipe(Effect.map((rows) => {
      const made = new Set(rows.map((row) => row.id))
      return batch.map((first) => made.has(first.attempt.deliveryId))
    }))
  }, MaxStatementRows, { minIntervalMs: SuccessIntervalMs })
}
