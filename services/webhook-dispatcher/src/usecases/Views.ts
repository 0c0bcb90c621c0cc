import { DeliveryAttempt, WebhookDelivery, WebhookEventKinds, WebhookSubscription, WebhookSubscriptionWithSecret } from "@portfolio/domain"
import { DateTime } from "effect"
import type { SubscriptionRecord } from "../domain/Subscription.js"
import type { AttemptRecord, DeliveryRecord } from "../ports/DeliveryRepository.js"

const utc = (date: Date) => DateTime.fromDateUnsafe(date)

const subscriptionFields = (s: SubscriptionRecord) => ({
  id: s.id,
  tenantId: s.tenantId,
  url: s.url,
  description: s.description,
  events: s.kinds ?? [...WebhookEventKinds],
  allEvents: s.kinds === null,
  state: s.state,
  disabledReason: s.disabledReason,
  consecutiveFailures: s.consecutiveFailures,
  previousSecretExpiresAt: s.previousSecretExpiresAt === null ? null : utc(s.previousSecretExpiresAt),
  createdAt: utc(s.createdAt),
  updatedAt: utc(s.updatedAt)
})

export const subscriptionView = (s: SubscriptionRecord) => WebhookSubscription.make(subscriptionFields(s))

/** Only at creation and rotation: the one time the secret is answered. */
export const subscriptionWithSecret = (s: SubscriptionRecord) => WebhookSubscriptionWithSecret.make({ ...subscriptionFields(s), secret: s.secret })

export const deliveryView = (d: DeliveryRecord) =>
  WebhookDelivery.make({
    ...d,
    nextAttemptAt: d.nextAttemptAt === null ? null : utc(d.nextAttemptAt),
    createdAt: utc(d.createdAt),
    updatedAt: utc(d.updatedAt)
  })

export const attemptView = (a: AttemptRecord) => DeliveryAttempt.make({ ...a, startedAt: utc(a.startedAt) })
