import { Config, Effect, Layer } from "effect"
import { connect, type NatsConnection } from "nats"
import { EventPublisher, PublishFailed } from "../EventPublisher.js"

/** The platform's event stream; created here when no stream captures `events.>` yet. */
const StreamName = "EVENTS"
const StreamSubjects = ["events.>"]

const ensureStream = (nc: NatsConnection, subject: string) =>
  Effect.tryPromise(async () => {
    const jsm = await nc.jetstreamManager()
    const found = await jsm.streams.find(subject).catch(() => undefined)
    if (found === undefined) await jsm.streams.add({ name: StreamName, subjects: StreamSubjects })
  })

/** JetStream through the `nats` 2.x client, kept behind `EventPublisher` so a client upgrade stays here. */
export const JetStreamPublisherLive = Layer.scoped(
  EventPublisher,
  Effect.gen(function*() {
    const servers = yield* Config.string("NATS_URL").pipe(Config.withDefault("nats://127.0.0.1:4222"))
    const nc = yield* Effect.acquireRelease(
      Effect.tryPromise(() => connect({ servers, name: "provisioning", maxReconnectAttempts: -1 })),
      (connection) => Effect.promise(() => connection.drain().catch(() => undefined))
    )
    const js = nc.jetstream()
    const streamChecked = new Set<string>()
    return EventPublisher.of({
      publish: (subject, payload, messageId) =>
        Effect.gen(function*() {
          if (!streamChecked.has(subject)) {
            yield* ensureStream(nc, subject)
            streamChecked.add(subject)
          }
          yield* Effect.tryPromise(() => js.publish(subject, new TextEncoder().encode(payload), { msgID: messageId }))
        }).pipe(Effect.mapError((cause) => new PublishFailed({ cause })))
    })
  })
)
