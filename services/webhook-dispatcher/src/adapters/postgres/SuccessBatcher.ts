import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { AttemptRecord } from "../../ports/DeliveryRepository.js"
import { makeStatementBatcher, MaxStatementRows } from "./StatementBatcher.js"

/**
 * Records successful attempts in batches (makeStatementBatcher): the attempts, their deliveries
 * settled, their subscriptions' failure counts reset. Failures are rarer and carry the
 * subscription's count back: they are written one by one (DeliveryRepositoryPg.complete).
 */
export const makeSuccessBatcher = (sql: SqlClient.SqlClient) =>
  makeStatementBatcher((batch: ReadonlyArray<{ readonly attempt: AttemptRecord; readonly subscriptionId: string }>) => {
    const attempts = batch.map(({ attempt: a }) =>
      sql`(${a.id}::uuid, ${a.deliveryId}::uuid, ${a.attempt}::int, ${a.startedAt}::timestamptz, ${a.durationMs}::int, ${a.statusCode}::int, ${a.error}::text, ${a.responseBody}::text)`
    )
    const subscriptions = [...new Set(batch.map((p) => p.subscriptionId))]
    return sql`
      WITH recorded AS (
        INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
        VALUES ${sql.csv(attempts)}
      ), moved AS (
        UPDATE webhook_dispatcher.deliveries SET status = 'succeeded', failure_reason = NULL, next_attempt_at = NULL, lease_until = NULL,
          updated_at = now(), attempts = attempts + 1, round_attempts = round_attempts + 1
        WHERE id IN ${sql.in(batch.map((p) => p.attempt.deliveryId))}
      )
      UPDATE webhook_dispatcher.subscriptions SET consecutive_failures = 0
      WHERE id IN ${sql.in(subscriptions)} AND consecutive_failures <> 0`.pipe(Effect.as(batch.map(() => undefined)))
  }, MaxStatementRows)
