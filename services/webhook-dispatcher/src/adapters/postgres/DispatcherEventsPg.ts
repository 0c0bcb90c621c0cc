import { SqlClient } from "@effect/sql"
import { SubscriptionDisabled, SubscriptionDisabledSubject } from "@portfolio/domain"
import { appendToOutbox } from "@portfolio/platform"
import { Effect, Layer, Schema } from "effect"
import { DispatcherEvents } from "../../ports/DispatcherEvents.js"
import { Schema as DispatcherSchema } from "./Migrations.js"

// The row keeps the event as it goes on the wire, so the relay sends the payload untouched.
const encode = Schema.encodeSync(SubscriptionDisabled)

export const DispatcherEventsPg = Layer.effect(
  DispatcherEvents,
  Effect.map(SqlClient.SqlClient, (sql) =>
    DispatcherEvents.of({
      subscriptionDisabled: (event) =>
        appendToOutbox(DispatcherSchema, [{ id: event.id, subject: SubscriptionDisabledSubject, payload: encode(event) }]).pipe(
          Effect.provideService(SqlClient.SqlClient, sql)
        )
    }))
)
