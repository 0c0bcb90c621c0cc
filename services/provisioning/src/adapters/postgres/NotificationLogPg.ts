import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { NotificationLog } from "../../ports/NotificationLog.js"

/**
 * One row per (event, recipient). The primary key makes a second claim of a pair wait on the first
 * one's transaction, then find it there: two replicas handling the same event mail once.
 */
export const NotificationLogPg = Layer.effect(
  NotificationLog,
  Effect.map(SqlClient.SqlClient, (sql) =>
    NotificationLog.of({
      claim: (eventId, recipient) =>
        sql`INSERT INTO provisioning.event_notifications (event_id, recipient)
            VALUES (${eventId}, ${recipient.toLowerCase()})
            ON CONFLICT DO NOTHING
            RETURNING event_id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)
    }))
)
