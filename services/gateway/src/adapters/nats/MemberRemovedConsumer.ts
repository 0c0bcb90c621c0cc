import { restartForever } from "@portfolio/platform/runtime"
import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain"
import { DeploymentIdConfig } from "@portfolio/platform/config"
import { NatsSettings, natsConnection, type NatsSettingsShape, runDurableConsumer } from "@portfolio/platform/nats"
import { Config, Duration, Effect, Result, Layer, Queue, Schema } from "effect"
import type { Msg } from "@nats-io/transport-node"
import { applyMemberRemoval } from "../../usecases/MemberRemoval.js"

/** Redelivery delay after a failed handling: a plain nak would have JetStream redeliver at once, in a tight loop. */
const RetryDelay = Duration.seconds(5)

/**
 * A durable nobody pulls from for this long is deleted by the server, so that deployments that are
 * gone (test systems above all) leave nothing behind. One that comes back recreates it and replays
 * the stream, which is harmless (see applyMemberRemoval).
 */
const InactiveThreshold = Duration.hours(24)

const decode = Schema.decodeUnknownResult(Schema.fromJsonString(MemberRemoved))

export interface MemberRemovedConsumerOptions {
  readonly nats: NatsSettingsShape
  /** Durable consumer name, shared by the gateway replicas so that each event is handled once. */
  readonly durable: string
}

/**
 * Listens to `member.removed` on JetStream and ends the removed member's access in that tenant
 * (their tokens revoked, their pending PAT requests closed).
 * It keeps retrying while NATS is unreachable: the proxy does not depend on it to serve.
 */
export const consumeMemberRemoved = (options: MemberRemovedConsumerOptions) =>
  runDurableConsumer({
    nats: options.nats,
    connectionName: "gateway",
    durable: options.durable,
    subject: MemberRemovedSubject,
    schema: MemberRemoved,
    handle: applyMemberRemoval,
    retryDelay: RetryDelay,
    inactiveThreshold: InactiveThreshold,
    // A new durable reads the whole stream: replays are harmless (see applyMemberRemoval).
    deliverPolicy: "all",
    logNames: { listener: "member.removed", event: "member.removed" }
  })

/**
 * Every process's own plain subscription to `member.removed`, beside the deployment's durable
 * (which only one replica receives each event from): each replica revokes (a no-op once another has)
 * and drops the holder from its own cache as soon as the event is published, instead of serving a
 * cached token until the cache expires. At most once and not replayed; what it misses, while NATS
 * is unreachable, the durable still revokes and the 1-second cache lets go of.
 */
export const watchMemberRemoved = (options: { readonly nats: NatsSettingsShape }) =>
  Effect.gen(function*() {
    const nc = yield* natsConnection(options.nats, { name: "gateway-local" })
    // A callback into a queue rather than the subscription's async iterator: closing the scope
    // would wait on the iterator's return, which ends only once the connection drains, after it.
    const received = yield* Queue.unbounded<Msg>()
    const subscription = nc.subscribe(MemberRemovedSubject, {
      callback: (error, message) => {
        if (error === null) Queue.offerUnsafe(received, message)
      }
    })
    yield* Effect.tryPromise(() => nc.flush())
    yield* Effect.logInfo("watching member.removed in this process")
    const apply = (message: Msg) =>
      Result.match(decode(message.string()), {
        // The durable consumer logs and drops what cannot be read.
        onFailure: () => Effect.void,
        onSuccess: (event) =>
          applyMemberRemoval(event).pipe(
            Effect.catchCause((cause) => Effect.logWarning("member.removed not applied in this process; the durable consumer retries", cause))
          )
      })
    yield* Effect.raceFirst(
      Effect.forever(Effect.flatMap(Queue.take(received), apply)),
      Effect.promise(() => subscription.closed)
    )
    return yield* Effect.fail(new Error("the member.removed subscription ended"))
  }).pipe(
    Effect.scoped,
    (watching) => restartForever(watching, "member.removed watch stopped; restarting", "2 seconds"),
    Effect.interruptible
  )

/**
 * The durable consumer of this deployment, from `DATABASE_URL`: named after its database (host,
 * port and database name, never the credentials). Replicas of a gateway share their database and
 * so the durable, and each event is handled once; another deployment on the same NATS (a staging
 * system, a second local system, parallel test runs) gets a durable of its own. A shared durable
 * would let it take this deployment's events, revoke nothing in its own database, and leave the
 * removed member's tokens working here.
 */
export const memberRemovedDurableConfig = DeploymentIdConfig.pipe(Config.map((deploymentId) => `gateway-member-removed-${deploymentId}`))

/** The listeners of the running service: the durable of its deployment, and the process's own watch. */
export const MemberRemovedConsumerLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const nats = yield* NatsSettings
    const durable = yield* memberRemovedDurableConfig
    yield* Effect.forkScoped(consumeMemberRemoved({ nats, durable }))
    yield* Effect.forkScoped(watchMemberRemoved({ nats }))
  })
)
