import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain/ports/provisioning"
import { Config, Duration, Effect, Either, Layer, Schedule, Schema } from "effect"
import { AckPolicy, connect, DeliverPolicy, type JsMsg, type NatsConnection } from "nats"
import { revokeHolderPats } from "../../usecases/RevokeHolderPats.js"

/** The platform's event stream (also ensured by the publisher): created here when no stream captures the subject. */
const StreamName = "EVENTS"
const StreamSubjects = ["events.>"]

/** Redelivery delay after a failed handling; a plain nak would redeliver at once (field notes). */
const RetryDelay = Duration.seconds(5)

const decode = Schema.decodeUnknownEither(Schema.parseJson(MemberRemoved))

export interface MemberRemovedConsumerOptions {
  readonly servers: string
  /** Durable consumer name, shared by the gateway replicas so that each event is handled once. */
  readonly durable: string
}

const ensureConsumer = (nc: NatsConnection, options: MemberRemovedConsumerOptions) =>
  Effect.tryPromise(async () => {
    const jsm = await nc.jetstreamManager()
    const stream = await jsm.streams.find(MemberRemovedSubject).catch(() => undefined)
    const streamName = stream ?? (await jsm.streams.add({ name: StreamName, subjects: StreamSubjects })).config.name
    const existing = await jsm.consumers.info(streamName, options.durable).catch(() => undefined)
    if (existing === undefined) {
      await jsm.consumers.add(streamName, {
        durable_name: options.durable,
        filter_subject: MemberRemovedSubject,
        ack_policy: AckPolicy.Explicit,
        // A new durable reads the whole stream: replays are harmless (see revokeHolderPats).
        deliver_policy: DeliverPolicy.All,
        max_deliver: -1
      })
    }
    return nc.jetstream().consumers.get(streamName, options.durable)
  })

const handle = (message: JsMsg) =>
  Either.match(decode(message.string()), {
    onLeft: (error) =>
      Effect.sync(() => message.term()).pipe(
        Effect.zipRight(Effect.logError("member.removed event could not be read; dropped", { seq: message.seq, error: error.message }))
      ),
    onRight: (event) =>
      revokeHolderPats(event).pipe(
        Effect.matchCauseEffect({
          onSuccess: () => Effect.sync(() => message.ack()),
          onFailure: (cause) =>
            Effect.sync(() => message.nak(Duration.toMillis(RetryDelay))).pipe(
              Effect.zipRight(Effect.logWarning("member.removed handling failed; redelivery scheduled", cause))
            )
        })
      )
  })

/**
 * Listens to `member.removed` on JetStream and revokes the removed member's tokens in that tenant.
 * It keeps retrying while NATS is unreachable: the proxy does not depend on it to serve.
 */
export const consumeMemberRemoved = (options: MemberRemovedConsumerOptions) =>
  Effect.gen(function*() {
    const nc = yield* Effect.acquireRelease(
      Effect.tryPromise(() => connect({ servers: options.servers, name: "gateway", maxReconnectAttempts: -1 })),
      (connection) => Effect.promise(() => connection.drain().catch(() => undefined))
    )
    const consumer = yield* ensureConsumer(nc, options)
    yield* Effect.logInfo("listening for member.removed", { durable: options.durable })
    return yield* Effect.tryPromise(() => consumer.next({ expires: 5_000 })).pipe(
      Effect.flatMap((message) => (message === null ? Effect.void : handle(message))),
      Effect.forever
    )
  }).pipe(
    Effect.scoped,
    Effect.tapErrorCause((cause) => Effect.logWarning("member.removed listener stopped; restarting", cause)),
    Effect.retry(Schedule.spaced("2 seconds")),
    Effect.interruptible
  )

/** The listener of the running service, from `NATS_URL`. */
export const MemberRemovedListenerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const servers = yield* Config.string("NATS_URL").pipe(Config.withDefault("nats://127.0.0.1:4222"))
    yield* Effect.forkScoped(consumeMemberRemoved({ servers, durable: "gateway-member-removed" }))
  })
)
