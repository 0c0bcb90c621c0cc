import { SqlClient } from "@effect/sql"
import { ApplicationEvent, applicationEventSubject } from "@portfolio/domain"
import { appendToOutbox } from "@portfolio/platform"
import { Effect, Layer, Schema } from "effect"
import { ApplicationEvents } from "../../ports/ApplicationEvents.js"

// The row keeps the event as it goes on the wire, so the relay sends the payload untouched.
const encode = Schema.encodeSync(ApplicationEvent)

export const ApplicationEventsPg = Layer.effect(
  ApplicationEvents,
  Effect.map(SqlClient.SqlClient, (sql) =>
    ApplicationEvents.of({
      append: (events) =>
        appendToOutbox("referential", events.map((event) => ({ id: event.id, subject: applicationEventSubject(event), payload: encode(event) })))
          .pipe(Effect.provideService(SqlClient.SqlClient, sql))
    }))
)
