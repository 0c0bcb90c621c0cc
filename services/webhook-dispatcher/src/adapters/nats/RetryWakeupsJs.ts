import { DeploymentIdConfig } from "@portfolio/platform/config"
import { Context, Effect, Layer } from "effect"
import type { JetStreamClient } from "@nats-io/jetstream"
import { RetryWakeups } from "../../ports/RetryWakeups.js"
import { wakeupSubject } from "./Streams.js"

/** The JetStream client of the workers' current connection; none while NATS is away. */
export class JetStreamLink extends Context.Service<JetStreamLink, { current: JetStreamClient | undefined }>()("@portfolio/webhook-dispatcher/JetStreamLink") {
  static readonly layer = Layer.sync(JetStreamLink, () => ({ current: undefined }))
}

/**
 * Wake-ups published on this deployment's subject, the message id naming the delivery and its
 * time so that a republished wake-up is dropped by the broker. A failure is logged, never raised:
 * the sweeper finds the delivery in PostgreSQL (docs/product-rules.md#webhooks).
 */
export const RetryWakeupsJs = Layer.effect(
  RetryWakeups,
  Effect.gen(function*() {
    const link = yield* JetStreamLink
    const subject = wakeupSubject(yield* DeploymentIdConfig)
    return RetryWakeups.of({
      schedule: (deliveryId, subscriptionId, at) => {
        const js = link.current
        if (js === undefined) return Effect.logWarning("NATS unreachable: retry wake-up left to the sweeper", { deliveryId })
        const payload = new TextEncoder().encode(JSON.stringify({ deliveryId, subscriptionId, at: at.getTime() }))
        return Effect.tryPromise(() => js.publish(subject, payload, { msgID: `${deliveryId}@${at.getTime()}` })).pipe(
          Effect.asVoid,
          Effect.catchCause((cause) => Effect.logWarning("retry wake-up not published; left to the sweeper", cause))
        )
      }
    })
  })
)
