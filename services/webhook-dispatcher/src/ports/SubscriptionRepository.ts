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
 * failure count moves by one statement per attempt, so concurrent attempts never lose a count.
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
  readonly rotateSecret: (id: string, secret: string, previousExpiresAt: Date | null) => Effect.Effect<Option.Option<SubscriptionRecord>>
  /** The enabled subscriptions of `tenantId` listening to `kind` that existed when the event happened. */
  readonly matching: (tenantId: string, kind: WebhookEventKind, eventCreatedAt: Date) => Effect.Effect<ReadonlyArray<SubscriptionRecord>>
  /** When the oldest enabled subscription was created: the events before it concern none. */
  readonly oldestEnabled: () => Effect.Effect<Option.Option<Date>>
  /** A success resets the count, a failure adds one; returns the count and state after the change. */
  readonly countOutcome: (
    id: string,
    succeeded: boolean
  ) => Effect.Effect<Option.Option<{ readonly consecutiveFailures: number; readonly state: "enabled" | "disabled" }>>
}

export class SubscriptionRepository extends Context.Tag("@portfolio/webhook-dispatcher/SubscriptionRepository")<
  SubscriptionRepository,
  SubscriptionRepositoryShape
>() {}
