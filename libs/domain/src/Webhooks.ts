import { Effect, Schema } from "effect"
import { withoutControls } from "./Text.js"
import { DateTimeUtc, Uuid, withDefault } from "./Wire.js"

/**
 * Webhook subscriptions, deliveries and attempts as the webhook-dispatcher's admin API shows them
 * (docs/product-rules.md#webhooks). Subscriptions are managed by operators (CLI) and, later, tenant admins
 * in the console; no public endpoint lists them.
 */

/** The event kinds a subscription can listen to: the product's catalogue. */
export const WebhookEventKinds = ["application.created", "application.updated", "das.submitted"] as const
export const WebhookEventKind = Schema.Literals(WebhookEventKinds).annotate({ identifier: "WebhookEventKind" })
export type WebhookEventKind = typeof WebhookEventKind.Type

export const SubscriptionId = Uuid.annotate({ identifier: "SubscriptionId" })
export const DeliveryId = Uuid.annotate({ identifier: "DeliveryId" })

export const WebhookUrl = Schema.String.pipe(
  Schema.check(Schema.isMinLength(1)),
  Schema.check(Schema.isMaxLength(2048)),
  Schema.check(Schema.makeFilter((s: string) => URL.canParse(s) || "must be an absolute URL")),
  Schema.annotate({ identifier: "WebhookUrl", description: "https (http only where private targets are allowed), at most 2048 characters." })
)

/** Free text shown on one line (`portfolio webhook show`, the console): no control character. */
export const WebhookDescription = Schema.String.pipe(Schema.check(Schema.isMaxLength(500)), withoutControls({ lineBreaks: false }))

export const SubscriptionState = Schema.Literals(["enabled", "disabled"])
export const DisabledReason = Schema.Literals(["manual", "consecutive_failures"]).annotate({
  description: "manual: an operator or admin disabled it; consecutive_failures: too many failed attempts in a row."
})

export class WebhookSubscription extends Schema.Class<WebhookSubscription>("WebhookSubscription")({
  id: SubscriptionId,
  tenantId: Uuid,
  url: Schema.String,
  description: Schema.String,
  events: Schema.Array(WebhookEventKind).annotate({ description: "The kinds it listens to." }),
  allEvents: Schema.Boolean.annotate({ description: "Created without a filter: also gets kinds added to the catalogue later." }),
  state: SubscriptionState,
  disabledReason: Schema.NullOr(DisabledReason),
  consecutiveFailures: Schema.Int,
  previousSecretExpiresAt: Schema.NullOr(DateTimeUtc).annotate({
    description: "While set and in the future, deliveries carry a second signature made with the secret before the last rotation."
  }),
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}) {}

/** A subscription with its signing secret: answered once, at creation and at each rotation. */
export class WebhookSubscriptionWithSecret extends Schema.Class<WebhookSubscriptionWithSecret>("WebhookSubscriptionWithSecret")({
  ...WebhookSubscription.fields,
  secret: Schema.String.annotate({ description: "whsec_ + base64 of 32 random bytes; shown once, store it now." })
}) {}

export class CreateSubscriptionRequest extends Schema.Class<CreateSubscriptionRequest>("CreateSubscriptionRequest")({
  url: WebhookUrl,
  events: Schema.optionalKey(Schema.NonEmptyArray(WebhookEventKind)),
  description: WebhookDescription.pipe(withDefault(""))
}) {}

export class UpdateSubscriptionRequest extends Schema.Class<UpdateSubscriptionRequest>("UpdateSubscriptionRequest")({
  url: Schema.optionalKey(WebhookUrl),
  events: Schema.optionalKey(Schema.NonEmptyArray(WebhookEventKind)),
  description: Schema.optionalKey(WebhookDescription)
}) {}

/** Grace of the previous secret after a rotation, in seconds: 0 to 7 days, 24 h by default. */
export class RotateSecretRequest extends Schema.Class<RotateSecretRequest>("RotateSecretRequest")({
  graceSeconds: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 7 * 24 * 3600 })), withDefault(24 * 3600))
}) {}

export const DeliveryStatus = Schema.Literals(["pending", "succeeded", "failed"])
export type DeliveryStatus = typeof DeliveryStatus.Type

export const DeliveryFailureReason = Schema.Literals(["attempts_exhausted", "subscription_disabled"]).annotate({
  description: "Why a failed delivery stopped: its retry schedule ran out, or its subscription was disabled while it waited."
})

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: DeliveryId,
  subscriptionId: SubscriptionId,
  eventId: Uuid,
  eventType: WebhookEventKind,
  status: DeliveryStatus,
  failureReason: Schema.NullOr(DeliveryFailureReason),
  attempts: Schema.Int.annotate({ description: "POSTs made so far, redeliveries included." }),
  nextAttemptAt: Schema.NullOr(DateTimeUtc),
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}) {}

export class DeliveryAttempt extends Schema.Class<DeliveryAttempt>("DeliveryAttempt")({
  id: Uuid.annotate({ identifier: undefined, description: "The X-Service-Delivery-Id this POST carried." }),
  deliveryId: DeliveryId,
  attempt: Schema.Int,
  startedAt: DateTimeUtc,
  durationMs: Schema.Int,
  statusCode: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String).annotate({ description: "Why no answer counted: timeout, connection refused, refused target, redirect..." }),
  responseBody: Schema.String.annotate({ description: "The first 1 KB of the answer." })
}) {}

export const DeliveriesQuery = Schema.Struct({
  status: Schema.optionalKey(DeliveryStatus),
  limit: Schema.NumberFromString.pipe(Schema.check(Schema.isInt()), Schema.check(Schema.isBetween({ minimum: 1, maximum: 1000 })), Schema.withDecodingDefaultKey(Effect.succeed("50")))
})

export class RecoverRequest extends Schema.Class<RecoverRequest>("RecoverRequest")({
  since: DateTimeUtc
}) {}

export class RecoverResult extends Schema.Class<RecoverResult>("RecoverResult")({
  redelivered: Schema.Int
}) {}
