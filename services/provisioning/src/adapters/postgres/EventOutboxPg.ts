import { SqlClient, SqlSchema } from "@effect/sql"
import { EventOutbox } from "../../ports/EventOutbox.js"
import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain"
import { Effect, Layer } from "effect"

export const EventOutboxPg = Layer.effect(
  EventOutbox,
  Effect.map(SqlClient.SqlClient, (sql) => {
    // The row keeps the event as it goes on the wire, so the publisher sends the payload untouched.
    const insert = SqlSchema.void({
      Request: MemberRemoved,
      execute: (payload) =>
        sql`INSERT INTO provisioning.outbox (id, subject, payload, created_at)
            VALUES (${payload.id}, ${MemberRemovedSubject}, ${JSON.stringify(payload)}::jsonb, ${payload.occurredAt})`
    })
    return EventOutbox.of({ append: (event) => insert(event).pipe(Effect.orDie) })
  })
)
