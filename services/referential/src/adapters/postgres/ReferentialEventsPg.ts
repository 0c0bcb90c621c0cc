import { SqlClient } from "@effect/sql"
import { ReferentialEvent, referentialEventSubject } from "@portfolio/domain"
import { appendToOutbox } from "@portfolio/platform"
import { Effect, Layer, Schema } from "effect"
import { ReferentialEvents } from "../../ports/ReferentialEvents.js"

// The row keeps the event as it goes on the wire, so the relay sends the payload untouched.
const encode = Schema.encodeSync(ReferentialEvent)

export const ReferentialEventsPg = Layer.effect(
  ReferentialEvents,
  Effect.map(SqlClient.SqlClient, (sql) =>
    ReferentialEvents.of({
      append: (events) =>
        appendToOutbox("referential", events.map((event) => ({ id: event.id, subject: referentialEventSubject(event), payload: encode(event) })))
          .pipe(Effect.provideService(SqlClient.SqlClient, sql))
    }))
)
