import { Schema } from "effect"
import { DateTimeUtc, Uuid } from "../Wire.js"

/** Subject of the dispatcher's internal event (stream `EVENTS`); never delivered as a webhook. */
export const SubscriptionDisabledSubject = "events.webhook-dispatcher.subscription.disabled"

/**
 * A subscription was disabled after too many consecutive failed attempts: provisioning, which
 * holds the tenant's members and mail, tells the tenant's admins (docs/product-rules.md#webhooks).
 */
export class SubscriptionDisabled extends Schema.Class<SubscriptionDisabled>("SubscriptionDisabled")({
  id: Uuid,
  type: Schema.Literal("webhook.subscription.disabled"),
  occurredAt: DateTimeUtc,
  tenantId: Uuid,
  subscriptionId: Uuid,
  url: Schema.String,
  consecutiveFailures: Schema.Int,
  lastError: Schema.String
}) {}
