import { SubscriptionDisabled, SubscriptionDisabledSubject } from "@portfolio/domain"
import { outboxWriter } from "@portfolio/platform/nats"
import { Effect, Layer } from "effect"
import { DispatcherOutbox } from "../../ports/DispatcherOutbox.js"
import { Schema } from "./Migrations.js"

export const DispatcherOutboxPg = Layer.effect(
  DispatcherOutbox,
  Effect.map(
    outboxWriter(Schema, SubscriptionDisabled, () => SubscriptionDisabledSubject),
    (append) => DispatcherOutbox.of({ append })
  )
)
