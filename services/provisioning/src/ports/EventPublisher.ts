import { Context, Data, type Effect } from "effect"

export class PublishFailed extends Data.TaggedError("PublishFailed")<{ readonly cause: unknown }> {}

/**
 * The event broker, as the outbox publisher sees it; `messageId` lets the broker drop a republished
 * duplicate. Its one client is a background worker rather than a use case, but it is a port all the
 * same: JetStream sits behind it, and a refusing broker can be put in its place to test the retry.
 */
export interface EventPublisherShape {
  readonly publish: (subject: string, payload: string, messageId: string) => Effect.Effect<void, PublishFailed>
}

export class EventPublisher extends Context.Tag("@portfolio/provisioning/EventPublisher")<EventPublisher, EventPublisherShape>() {}
