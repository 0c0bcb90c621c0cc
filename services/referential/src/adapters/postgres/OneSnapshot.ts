import type { SqlClient, SqlError } from "effect/sql"
import { Effect, Queue, Stream } from "effect"

/**
 * Batches read by several statements from one snapshot (a read-only repeatable-read
 * transaction), as one statement would read them: a write committed meanwhile shows in none of
 * them. Each offered as it is read, two ahead of the reader at most; a reader that stops ends the
 * transaction.
 */
export const fromOneSnapshot = <A>(
  sql: SqlClient.SqlClient,
  read: (offer: (batch: A) => Effect.Effect<void>) => Effect.Effect<void, SqlError.SqlError>
) =>
  Stream.callback<A>((queue) =>
    sql.withTransaction(Effect.andThen(
      sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`,
      read((batch) => Effect.asVoid(Queue.offer(queue, batch)))
    )).pipe(Effect.orDie, Effect.andThen(Queue.end(queue))), { bufferSize: 2 })
