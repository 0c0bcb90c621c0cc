import { SubscriptionDisabled, SubscriptionDisabledSubject } from "@portfolio/domain"
import { outboxWriter } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { DispatcherEvents } from "../../ports/DispatcherEvents.js"
import { Schema } from "./Migrations.js"

export const DispatcherEventsPg = Layer.effect(
  DispatcherEvents,
  Effect.map(
    outboxWriter(Schema, SubscriptionDisabled, () => SubscriptionDisabledSubject),
    (write) => DispatcherEvents.of({ subscriptionDisabled: (event) => write([event]) })
  )
)
