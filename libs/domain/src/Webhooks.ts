import { Schema } from "effect"
import { withoutControls } from "./Text.js"

/**
 * Webhook subscriptions, deliveries and attempts as the webhook-dispatcher's admin API shows them
 * (docs/product-rules.md#webhooks). Subscriptions are managed by operators (CLI) and, later, tenant admins
 * in the console; no public endpoint lists them.
 */

/** The event kinds a subscription can listen to: the product's catalogue. */
export const WebhookEventKinds = ["application.created", "application.updated", "das.submitted"] as const
export const WebhookEventKind = Schema.Literal(...WebhookEventKinds).annotations({ identifier: "WebhookEventKind" })
export type WebhookEventKind = typeof WebhookEventKind.Type

export const SubscriptionId = Schema.UUID.annotations({ identifier: "SubscriptionId" })
export const DeliveryId = Schema.UUID.annotations({ identifier: "DeliveryId" })

export const WebhookUrl = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(2048),
  Schema.filter((s) => URL.canParse(s) || "must be an absolute URL"),
  Schema.annotations({ identifier: "WebhookUrl", description: "https (http only where private targets are allowed), at most 2048 characters." })
)

/** Free text shown on one line (`portfolio webhook show`, the console): no control character. */
export const WebhookDescription = Schema.String.pipe(Schema.maxLength(500), withoutControls({ lineBreaks: false }))

export const SubscriptionState = Schema.Literal("enabled", "disabled")
export const DisabledReason = Schema.Literal("manual", "consecutive_failures").annotations({
  description: "manual: an operator or admin disabled it; consecutive_failures: too many failed attempts in a row."
})

export class WebhookSubscription extends Schema.Class<WebhookSubscription>("WebhookSubscription")({
  id: SubscriptionId,
  tenantId: Schema.UUID,
  url: Schema.String,
  description: Schema.String,
  events: Schema.Array(WebhookEventKind).annotations({ description: "The kinds it listens to." }),
  allEvents: Schema.Boolean.annotations({ description: "Created without a filter: also gets kinds added to the catalogue later." }),
  state: SubscriptionState,
  disabledReason: Schema.NullOr(DisabledReason),
  consecutiveFailures: Schema.Int,
  previousSecretExpiresAt: Schema.NullOr(Schema.DateTimeUtc).annotations({
    description: "While set and in the future, deliveries carry a second signature made with the secret before the last rotation."
  }),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}

/** A subscription with its signing secret: answered once, at creation and at each rotation. */
export class WebhookSubscriptionWithSecret extends Schema.Class<WebhookSubscriptionWithSecret>("WebhookSubscriptionWithSecret")({
  ...WebhookSubscription.fields,
  secret: Schema.String.annotations({ description: "whsec_ + base64 of 32 random bytes; shown once, store it now." })
}) {}

export class CreateSubscriptionRequest extends Schema.Class<CreateSubscriptionRequest>("CreateSubscriptionRequest")({
  url: WebhookUrl,
  events: Schema.optionalWith(Schema.NonEmptyArray(WebhookEventKind), { exact: true }),
  description: Schema.optionalWith(WebhookDescription, { default: () => "" })
}) {}

export class UpdateSubscriptionRequest extends Schema.Class<UpdateSubscriptionRequest>("UpdateSubscriptionRequest")({
  url: Schema.optionalWith(WebhookUrl, { exact: true }),
  events: Schema.optionalWith(Schema.NonEmptyArray(WebhookEventKind), { exact: true }),
  description: Schema.optionalWith(WebhookDescription, { exact: true })
}) {}

/** Grace of the previous secret after a rotation, in seconds: 0 to 7 days, 24 h by default. */
export class RotateSecretRequest extends Schema.Class<RotateSecretRequest>("RotateSecretRequest")({
  graceSeconds: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 7 * 24 * 3600)), { default: () => 24 * 3600 })
}) {}

export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed")
export type DeliveryStatus = typeof DeliveryStatus.Type

export const DeliveryFailureReason = Schema.Literal("attempts_exhausted", "subscription_disabled").annotations({
  description: "Why a failed delivery stopped: its retry schedule ran out, or its subscription was disabled while it waited."
})

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: DeliveryId,
  subscriptionId: SubscriptionId,
  eventId: Schema.UUID,
  eventType: WebhookEventKind,
  status: DeliveryStatus,
  failureReason: Schema.NullOr(DeliveryFailureReason),
  attempts: Schema.Int.annotations({ description: "POSTs made so far, redeliveries included." }),
  nextAttemptAt: Schema.NullOr(Schema.DateTimeUtc),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}

export class DeliveryAttempt extends Schema.Class<DeliveryAttempt>("DeliveryAttempt")({
  id: Schema.UUID.annotations({ description: "The X-Service-Delivery-Id this POST carried." }),
  deliveryId: DeliveryId,
  attempt: Schema.Int,
  startedAt: Schema.DateTimeUtc,
  durationMs: Schema.Int,
  statusCode: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String).annotations({ description: "Why no answer counted: timeout, connection refused, refused target, redirect..." }),
  responseBody: Schema.String.annotations({ description: "The first 1 KB of the answer." })
}) {}

export const DeliveriesQuery = Schema.Struct({
  status: Schema.optional(DeliveryStatus),
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)), { default: () => 50 })
})

export class RecoverRequest extends Schema.Class<RecoverRequest>("RecoverRequest")({
  since: Schema.DateTimeUtc
}) {}

export class RecoverResult extends Schema.Class<RecoverResult>("RecoverResult")({
  redelivered: Schema.Int
}) {}
