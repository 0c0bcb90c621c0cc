import type { SqlClient, SqlError } from "@effect/sql"
import { Chunk, Deferred, Effect, Exit, Queue } from "effect"
import type { AttemptRecord } from "../../ports/DeliveryRepository.js"

interface Pending {
  readonly attempt: AttemptRecord
  readonly subscriptionId: string
  readonly done: Deferred.Deferred<void, SqlError.SqlError>
}

/** Successes recorded together at most: one statement's parameters stay far below PostgreSQL's 65,535. */
const MaxBatch = 256

/**
 * Records successful attempts in batches: whatever succeeded while the previous batch was being
 * written goes in the next statement, so that under load a delivery costs a fraction of a round
 * trip and, when idle, a success is written at once (nothing waits for a batch to fill). Each
 * caller resumes once its own row is committed. Failures are rarer and carry the subscription's
 * count back: they are written one by one (DeliveryRepositoryPg.complete).
 */
export const makeSuccessBatcher = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Pending>()
    const write = (batch: ReadonlyArray<Pending>) => {
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
        WHERE id IN ${sql.in(subscriptions)} AND consecutive_failures <> 0`
    }
    yield* Queue.takeBetween(queue, 1, MaxBatch).pipe(
      Effect.flatMap((chunk) => {
        const batch = Chunk.toReadonlyArray(chunk)
        return Effect.exit(write(batch)).pipe(
          Effect.flatMap((exit) => Effect.forEach(batch, (p) => Deferred.done(p.done, Exit.asVoid(exit)), { discard: true }))
        )
      }),
      Effect.forever,
      Effect.forkScoped
    )
    return (attempt: AttemptRecord, subscriptionId: string) =>
      Effect.flatMap(Deferred.make<void, SqlError.SqlError>(), (done) =>
        Effect.zipRight(Queue.offer(queue, { attempt, subscriptionId, done }), Deferred.await(done)))
  })
