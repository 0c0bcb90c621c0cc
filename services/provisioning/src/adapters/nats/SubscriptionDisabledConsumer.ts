import { SubscriptionDisabled, SubscriptionDisabledSubject } from "@portfolio/domain"
import { DeploymentIdConfig } from "@portfolio/platform/config"
import { NatsSettings, type NatsSettingsShape, runDurableConsumer } from "@portfolio/platform/nats"
import { Config, Duration, Effect, Layer } from "effect"
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

export interface SubscriptionDisabledConsumerOptions {
  readonly nats: NatsSettingsShape
  /** Durable consumer name, shared by the provisioning replicas so that each event is handled once. */
  readonly durable: string
}

/**
 * Listens to the dispatcher's `webhook.subscription.disabled` on JetStream and mails the tenant's
 * admins. It keeps retrying while NATS is unreachable: provisioning serves without it.
 */
export const consumeSubscriptionDisabled = (options: SubscriptionDisabledConsumerOptions) =>
  runDurableConsumer({
    nats: options.nats,
    connectionName: "provisioning-subscription-disabled",
    durable: options.durable,
    subject: SubscriptionDisabledSubject,
    schema: SubscriptionDisabled,
    handle: notifySubscriptionDisabled,
    retryDelay: RetryDelay,
    inactiveThreshold: InactiveThreshold,
    // A new durable reads the whole stream: what was published before it existed is still told.
    deliverPolicy: "all",
    // Above the time one event takes (a mail per tenant-admin), so that JetStream does not hand
    // it to another replica while this one is still sending.
    ackWait: Duration.minutes(2),
    logNames: { listener: "webhook.subscription.disabled", event: "subscription.disabled" }
  })

/**
 * The durable of this deployment, named after its database (host, port and name, never the
 * credentials), as the gateway's member.removed durable: replicas share it, another deployment on
 * the same NATS has its own and never takes this one's events.
 */
export const subscriptionDisabledDurableConfig = DeploymentIdConfig.pipe(
  Config.map((deploymentId) => `provisioning-subscription-disabled-${deploymentId}`)
)

/** The listener of the running service. */
export const SubscriptionDisabledConsumerLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const nats = yield* NatsSettings
    const durable = yield* subscriptionDisabledDurableConfig
    yield* Effect.forkScoped(consumeSubscriptionDisabled({ nats, durable }))
  })
)
