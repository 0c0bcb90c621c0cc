import type { WebhookEventKind } from "@portfolio/domain"
import { Context, type Effect, type Option } from "effect"
import type { SubscriptionRecord } from "../domain/Subscription.js"

export interface SubscriptionChanges {
  readonly url?: string
  readonly kinds?: ReadonlyArray<WebhookEventKind> | null
  readonly description?: string
}

/**
 * Subscriptions, their state and their secrets. Writes join the caller's unit of work; the
 * failure count moves with each attempt's record (DeliveryRepository.complete).
 */
export interface SubscriptionRepositoryShape {
  readonly insert: (subscription: SubscriptionRecord) => Effect.Effect<void>
  readonly find: (id: string) => Effect.Effect<Option.Option<SubscriptionRecord>>
  readonly listByTenant: (tenantId: string) => Effect.Effect<ReadonlyArray<SubscriptionRecord>>
  readonly update: (id: string, changes: SubscriptionChanges) => Effect.Effect<Option.Option<SubscriptionRecord>>
  readonly remove: (id: string) => Effect.Effect<boolean>
  /** Enabling resets the failure count; disabling records why. */
  readonly setState: (
    id: string,
    state: "enabled" | "disabled",
    reason: SubscriptionRecord["disabledReason"]
  ) => Effect.Effect<Option.Option<SubscriptionRecord>>
  /** Disables an enabled subscription for its consecutive failures; false when it was not enabled (another attempt did it). */
  readonly disableForFailures: (id: string) => Effect.Effect<boolean>
  readonly rotateSecret: (id: string, secret: string, previousExpiresAt: Date | null) => Effect.Effect<Option.Option<SubscriptionRecord>>
  /** When the oldest enabled subscription was created: the events before it concern none. */
  readonly oldestEnabled: () => Effect.Effect<Option.Option<Date>>
}

export class SubscriptionRepository extends Context.Service<
  SubscriptionRepository,
  SubscriptionRepositoryShape
>()("@portfolio/webhook-dispatcher/SubscriptionRepository") {}
