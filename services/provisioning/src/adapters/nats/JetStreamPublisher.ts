import { ensureEventsStream, NatsConfig, natsConnection } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { EventPublisher, PublishFailed } from "../../ports/EventPublisher.js"

/** JetStream through the `nats` 2.x client, kept behind `EventPublisher` so a client upgrade stays here. */
export const JetStreamPublisherLive = Layer.scoped(
  EventPublisher,
  Effect.gen(function*() {
    const nc = yield* natsConnection(yield* NatsConfig, { name: "provisioning" })
    const js = nc.jetstream()
    const streamChecked = new Set<string>()
    return EventPublisher.of({
      publish: (subject, payload, messageId) =>
        Effect.gen(function*() {
          if (!streamChecked.has(subject)) {
            yield* Effect.tryPromise(async () => ensureEventsStream(await nc.jetstreamManager(), subject))
            streamChecked.add(subject)
          }
          yield* Effect.tryPromise(() => js.publish(subject, new TextEncoder().encode(payload), { msgID: messageId }))
        }).pipe(Effect.mapError((cause) => new PublishFailed({ cause })))
    })
  })
)
