import type { SubscriptionDisabled } from "@portfolio/domain"
import { Context, type Effect } from "effect"

/** The dispatcher's own events, written in the caller's unit of work (its outbox). */
export interface DispatcherEventsShape {
  readonly subscriptionDisabled: (event: SubscriptionDisabled) => Effect.Effect<void>
}

export class DispatcherEvents extends Context.Tag("@portfolio/webhook-dispatcher/DispatcherEvents")<DispatcherEvents, DispatcherEventsShape>() {}
