import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { AttemptRecord } from "../../ports/DeliveryRepository.js"
import { makeStatementBatcher, MaxStatementRows } from "./StatementBatcher.js"

/**
 * A statement of successes at most every 2 ms under load: measured, writing each as soon as the
 * previous ended made statements of one or two rows, and PostgreSQL's per-statement work and the
 * socket writes a large part of a delivery's cost.
 */
const SuccessIntervalMs = 2

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
