import { Context, type Effect } from "effect"

/**
 * The broker's side of a retry: a wake-up for a delivery at a time. Best effort by design:
 * PostgreSQL holds the delivery's next attempt time and the sweeper finds one whose wake-up was
 * lost (docs/product-rules.md#webhooks), so scheduling never fails the attempt that asked for it.
 */
export interface RetryWakeupsShape {
  readonly schedule: (deliveryId: string, subscriptionId: string, at: Date) => Effect.Effect<void>
}

export class RetryWakeups extends Context.Service<RetryWakeups, RetryWakeupsShape>()("@portfolio/webhook-dispatcher/RetryWakeups") {}
