import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Layer, Schedule, Schema } from "effect"
import { EventPublisher } from "../../ports/EventPublisher.js"

/**
 * Publishes the outbox's unpublished events in order, marking each once the broker has it (the
 * relay of the transactional outbox). Replicas share the work through SKIP LOCKED; a crash between
 * publish and mark republishes with the same message id, which the broker and the idempotent
 * consumers absorb. Returns how many went out.
 */
export const publishPendingEvents = Effect.fn("publishPendingEvents")(function*(batchSize: number) {
  const sql = yield* SqlClient.SqlClient
  const publisher = yield* EventPublisher
  const pending = SqlSchema.findAll({
    Request: Schema.Number,
    Result: Schema.Struct({ id: Schema.String, subject: Schema.String, payload: Schema.Unknown }),
    execute: (limit) =>
      sql`SELECT id, subject, payload FROM provisioning.outbox
          WHERE published_at IS NULL ORDER BY created_at, id
          LIMIT ${limit} FOR UPDATE SKIP LOCKED`
  })
  return yield* sql.withTransaction(
    Effect.gen(function*() {
      const rows = yield* pending(batchSize)
      let published = 0
      for (const row of rows) {
        const sent = yield* Effect.either(publisher.publish(row.subject, JSON.stringify(row.payload), row.id))
        if (sent._tag === "Left") {
          yield* Effect.logWarning("event not published yet; will retry", { eventId: row.id, cause: String(sent.left.cause) })
          break
        }
        yield* sql`UPDATE provisioning.outbox SET published_at = now() WHERE id = ${row.id}`
        published++
      }
      return published
    })
  )
})

/**
 * Publishes the outbox for the life of the service, every `interval`. The broker connection is made
 * inside the loop so that the service starts and keeps serving while NATS is unreachable; the
 * outbox holds the events meanwhile.
 */
export const OutboxPublisher = <E>(publisher: Layer.Layer<EventPublisher, E>, interval = "200 millis" as const) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const loop = publishPendingEvents(100).pipe(
        Effect.repeat(Schedule.spaced(interval)),
        Effect.provide(publisher),
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.tapErrorCause((cause) => Effect.logWarning("outbox publisher stopped; restarting", cause)),
        Effect.retry(Schedule.spaced("1 second"))
      )
      yield* Effect.forkScoped(loop)
    })
  )
