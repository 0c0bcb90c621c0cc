import { appendToOutbox } from "@portfolio/platform"
import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import { EventOutbox } from "../../ports/EventOutbox.js"

// The row keeps the event as it goes on the wire, so the relay sends the payload untouched.
const encode = Schema.encodeSync(MemberRemoved)

export const EventOutboxPg = Layer.effect(
  EventOutbox,
  Effect.map(SqlClient.SqlClient, (sql) =>
    EventOutbox.of({
      append: (event) =>
        appendToOutbox("provisioning", [{ id: event.id, subject: MemberRemovedSubject, payload: encode(event) }]).pipe(
          Effect.provideService(SqlClient.SqlClient, sql)
        )
    }))
)
