import type { SqlClient, SqlError, Statement } from "effect/sql"
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

/** Rows per fetch of `inBatches`. */
const BatchRows = 250

/**
 * Rows a whole-tenant statement reads in a transaction (`fromOneSnapshot`'s), through a cursor
 * `name`, a batch at a time, each handed to `each` as fetched: the result is never whole in this
 * process. Batches of BatchRows: at 1,000 functions a batch's JSON was 350 to 400 KB of text in
 * one string, made in V8's large-object space, which only a full collection empties; the flat
 * list's making then peaked 19 MB above its start (12 MB more heap) against 5 MB (none) at 250
 * ("The read path", "Forests walked, never assembled", in docs/architecture.md).
 */
export const inBatches = <Row extends object>(
  sql: SqlClient.SqlClient,
  name: string,
  statement: Statement.Statement<unknown>,
  each: (rows: ReadonlyArray<Row>) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    // Decoded by hand from the columns as named (Rows.ts): without the client's renaming.
    const raw = sql.withoutTransforms()
    yield* raw`DECLARE ${sql.unsafe(name)} NO SCROLL CURSOR FOR ${statement}`
    while (true) {
      // A reader that stops early (a page of the flat list) interrupts between fetches, never
      // during one: interrupting a statement cancels it through another connection of the pool.
      const rows = yield* Effect.uninterruptible(raw.unsafe<Row>(`FETCH ${BatchRows} FROM ${name}`))
      if (rows.length > 0) yield* each(rows)
      if (rows.length < BatchRows) return
    }
  })
