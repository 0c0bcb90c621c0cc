import { SubscriptionDisabled, SubscriptionDisabledSubject } from "@portfolio/domain"
import { DeploymentIdConfig, ensureEventsStream, NatsConfig, natsConnection, type NatsConnection, type NatsSettings } from "@portfolio/platform"
import { Config, Duration, Effect, Either, Layer, Schedule, Schema } from "effect"
import { AckPolicy, DeliverPolicy, type JsMsg, nanos } from "nats"
import { notifySubscriptionDisabled } from "../../usecases/SubscriptionDisabledNotice.js"

/**
 * Redelivery delay after a failed handling (SMTP or the database unreachable): a plain nak would
 * have JetStream redeliver at once, in a tight loop against a server that is down.
 */
const RetryDelay = Duration.seconds(30)

/**
 * A durable nobody pulls from for this long is deleted by the server, so that deployments that are
 * gone leave nothing behind. One that comes back recreates it and replays the stream, which mails
 * nobody twice (the notification log).
 */
const InactiveThreshold = Duration.hours(24)

const decode = Schema.decodeUnknownEither(Schema.parseJson(SubscriptionDisabled))

export interface SubscriptionDisabledConsumerOptions {
  readonly nats: NatsSettings
  /** Durable consumer name, shared by the provisioning replicas so that each event is handled once. */
  readonly durable: string
}

const ensureConsumer = (nc: NatsConnection, options: SubscriptionDisabledConsumerOptions) =>
  Effect.tryPromise(async () => {
    const jsm = await nc.jetstreamManager()
    const streamName = await ensureEventsStream(jsm, SubscriptionDisabledSubject)
    const existing = await jsm.consumers.info(streamName, options.durable).catch(() => undefined)
    if (existing === undefined) {
      await jsm.consumers.add(streamName, {
        durable_name: options.durable,
        filter_subject: SubscriptionDisabledSubject,
        ack_policy: AckPolicy.Explicit,
        // A new durable reads the whole stream: what was published before it existed is still told.
        deliver_policy: DeliverPolicy.All,
        max_deliver: -1,
        // Above the time one event takes (a mail per tenant-admin), so that JetStream does not hand
        // it to another replica while this one is still sending.
        ack_wait: nanos(Duration.toMillis(Duration.minutes(2))),
        inactive_threshold: nanos(Duration.toMillis(InactiveThreshold))
      })
    }
    return nc.jetstream().consumers.get(streamName, options.durable)
  })

const handle = (message: JsMsg) =>
  Either.match(decode(message.string()), {
    onLeft: (error) =>
      Effect.sync(() => message.term()).pipe(
        Effect.zipRight(Effect.logError("subscription.disabled event could not be read; dropped", { seq: message.seq, error: error.message }))
      ),
    onRight: (event) =>
      notifySubscriptionDisabled(event).pipe(
        Effect.matchCauseEffect({
          onSuccess: () => Effect.sync(() => message.ack()),
          onFailure: (cause) =>
            Effect.sync(() => message.nak(Duration.toMillis(RetryDelay))).pipe(
              Effect.zipRight(Effect.logWarning("subscription.disabled handling failed; redelivery scheduled", cause))
            )
        })
      )
  })

/**
 * Listens to the dispatcher's `webhook.subscription.disabled` on JetStream and mails the tenant's
 * admins. It keeps retrying while NATS is unreachable: provisioning serves without it.
 */
export const consumeSubscriptionDisabled = (options: SubscriptionDisabledConsumerOptions) =>
  Effect.gen(function*() {
    const nc = yield* natsConnection(options.nats, { name: "provisioning-subscription-disabled" })
    const consumer = yield* ensureConsumer(nc, options)
    yield* Effect.logInfo("listening for webhook.subscription.disabled", { durable: options.durable })
    return yield* Effect.tryPromise(() => consumer.next({ expires: 5_000 })).pipe(
      Effect.flatMap((message) => (message === null ? Effect.void : handle(message))),
      Effect.forever
    )
  }).pipe(
    Effect.scoped,
    Effect.tapErrorCause((cause) => Effect.logWarning("webhook.subscription.disabled listener stopped; restarting", cause)),
    Effect.retry(Schedule.spaced("2 seconds")),
    Effect.interruptible
  )

/**
 * The durable of this deployment, named after its database (host, port and name, never the
 * credentials), as the gateway's member.removed durable: replicas share it, another deployment on
 * the same NATS has its own and never takes this one's events.
 */
export const subscriptionDisabledDurableConfig = DeploymentIdConfig.pipe(
  Config.map((deploymentId) => `provisioning-subscription-disabled-${deploymentId}`)
)

/** The listener of the running service. */
export const SubscriptionDisabledListenerLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const nats = yield* NatsConfig
    const durable = yield* subscriptionDisabledDurableConfig
    yield* Effect.forkScoped(consumeSubscriptionDisabled({ nats, durable }))
  })
)
