import { SqlClient } from "@effect/sql"
import { EventOutbox } from "../../ports/EventOutbox.js"
import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain/events/MemberRemoved"
import { DateTime, Effect, Layer, Schema } from "effect"

const encode = Schema.encode(MemberRemoved)

export const EventOutboxPg = Layer.effect(
  EventOutbox,
  Effect.map(SqlClient.SqlClient, (sql) =>
    EventOutbox.of({
      append: (event) =>
        Effect.gen(function*() {
          const payload = yield* encode(event)
          yield* sql`INSERT INTO provisioning.outbox (id, subject, payload, created_at)
                     VALUES (${event.id}, ${MemberRemovedSubject}, ${JSON.stringify(payload)}::jsonb, ${DateTime.toDate(event.occurredAt)})`
        }).pipe(Effect.orDie)
    }))
)
