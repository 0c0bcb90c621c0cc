import { Context, Data, type Effect } from "effect"

export class PublishFailed extends Data.TaggedError("PublishFailed")<{ readonly cause: unknown }> {}

/** Where the outbox relay hands events over; `messageId` lets the broker drop a republished duplicate. */
export interface EventPublisherShape {
  readonly publish: (subject: string, payload: string, messageId: string) => Effect.Effect<void, PublishFailed>
}

export class EventPublisher extends Context.Tag("@portfolio/provisioning/EventPublisher")<EventPublisher, EventPublisherShape>() {}
