import type { DeliveryAttempt, WebhookDelivery, WebhookEventKind, WebhookSubscription, WebhookSubscriptionWithSecret } from "@portfolio/domain"
import { Context, type Effect, type Option } from "effect"
import type { UpstreamUnavailable } from "./DirectoryDesk.js"
import type { Actor, Refused } from "./TokenDesk.js"

export interface SubscriptionDraft {
  readonly url: string
  readonly description: string
  /** Empty: every kind, those added to the catalogue later included. */
  readonly events: ReadonlyArray<typeof WebhookEventKind.Type>
}

/**
 * Webhook subscriptions: the dispatcher's admin API, on behalf of the member. A subscription is
 * reached by its id there, whatever its tenant: the use cases check it is the member's tenant's.
 */
export interface WebhookDeskShape {
  readonly list: (actor: Actor) => Effect.Effect<ReadonlyArray<WebhookSubscription>, UpstreamUnavailable>
  readonly create: (actor: Actor, draft: SubscriptionDraft) => Effect.Effect<WebhookSubscriptionWithSecret, Refused | UpstreamUnavailable>
  readonly get: (actor: Actor, id: string) => Effect.Effect<Option.Option<WebhookSubscription>, UpstreamUnavailable>
  readonly update: (actor: Actor, id: string, draft: SubscriptionDraft) => Effect.Effect<WebhookSubscription, Refused | UpstreamUnavailable>
  readonly setEnabled: (actor: Actor, id: string, enabled: boolean) => Effect.Effect<WebhookSubscription, Refused | UpstreamUnavailable>
  readonly rotateSecret: (actor: Actor, id: string, graceSeconds: number) => Effect.Effect<WebhookSubscriptionWithSecret, Refused | UpstreamUnavailable>
  /** The latest deliveries, newest first. */
  readonly deliveries: (actor: Actor, id: string, limit: number) => Effect.Effect<ReadonlyArray<WebhookDelivery>, UpstreamUnavailable>
  readonly attempts: (actor: Actor, deliveryId: string) => Effect.Effect<ReadonlyArray<DeliveryAttempt>, UpstreamUnavailable>
  readonly redeliver: (actor: Actor, deliveryId: string) => Effect.Effect<WebhookDelivery, Refused | UpstreamUnavailable>
  readonly recover: (actor: Actor, id: string, sinceMs: number) => Effect.Effect<number, Refused | UpstreamUnavailable>
}

export class WebhookDesk extends Context.Service<WebhookDesk, WebhookDeskShape>()("@portfolio/console/WebhookDesk") {}
