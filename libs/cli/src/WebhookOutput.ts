import {
  DeliveryAttempt,
  type DeliveryStatus,
  RecoverResult,
  type Tenant,
  WebhookDelivery,
  WebhookSubscription,
  WebhookSubscriptionWithSecret
} from "@portfolio/domain"
import { DateTime, Schema } from "effect"
import { encodeJson, type Output } from "./Output.js"

/** The webhook commands' answers: `--json` prints the contract's records as encoded, nothing renamed. */

const iso = DateTime.formatIso
const encodeSubscription = encodeJson(WebhookSubscription)
const encodeWithSecret = encodeJson(WebhookSubscriptionWithSecret)
const encodeSubscriptions = encodeJson(Schema.Array(WebhookSubscription))
const encodeDelivery = encodeJson(WebhookDelivery)
const encodeDeliveries = encodeJson(Schema.Array(WebhookDelivery))
const encodeAttempts = encodeJson(Schema.Array(DeliveryAttempt))
const encodeRecovered = encodeJson(RecoverResult)

const stateOf = (s: WebhookSubscription) =>
  s.state === "enabled" ? "enabled" : `disabled (${s.disabledReason === "consecutive_failures" ? "consecutive failures" : "manual"})`

const eventsOf = (s: WebhookSubscription) => (s.allEvents ? "all (kinds added later included)" : s.events.join(", "))

const details = (s: WebhookSubscription): Array<string> => [
  `  url:          ${s.url}`,
  `  events:       ${eventsOf(s)}`,
  `  state:        ${stateOf(s)}`,
  `  failures:     ${s.consecutiveFailures} in a row`,
  ...(s.description === "" ? [] : [`  description:  ${s.description}`]),
  ...(s.previousSecretExpiresAt === null ? [] : [`  old secret:   also signs until ${iso(s.previousSecretExpiresAt)}`]),
  `  tenant id:    ${s.tenantId}`,
  `  updated:      ${iso(s.updatedAt)}`
]

const secretLines = (secret: string) => ["", `  ${secret}`, "", "This signing secret is shown this once; store it now."]

export const webhookCreated = ({ subscription, tenant }: { readonly tenant: Tenant; readonly subscription: WebhookSubscriptionWithSecret }): Output => ({
  json: encodeWithSecret(subscription),
  human: [`Webhook ${subscription.id} created in ${tenant.slug}.`, ...details(subscription), ...secretLines(subscription.secret)]
})

export const webhookShown = (heading: string) => (subscription: WebhookSubscription): Output => ({
  json: encodeSubscription(subscription),
  human: [`Webhook ${subscription.id}${heading}`, ...details(subscription)]
})

export const webhooksListed = ({ subscriptions, tenant }: { readonly tenant: Tenant; readonly subscriptions: ReadonlyArray<WebhookSubscription> }): Output => ({
  json: encodeSubscriptions(subscriptions),
  human: subscriptions.length === 0
    ? [`No webhook in ${tenant.slug}.`]
    : subscriptions.map((s) => `${s.id}  ${s.state.padEnd(8)}  ${s.url}  events: ${eventsOf(s)}  failures: ${s.consecutiveFailures}`)
})

export const webhookDeleted = (id: string): Output => ({
  json: { id, deleted: true },
  human: [`Webhook ${id} deleted.`]
})

export const webhookSecretRotated = (subscription: WebhookSubscriptionWithSecret): Output => ({
  json: encodeWithSecret(subscription),
  human: [
    `Signing secret of webhook ${subscription.id} rotated.`,
    subscription.previousSecretExpiresAt === null
      ? "The previous secret no longer signs."
      : `Until ${iso(subscription.previousSecretExpiresAt)} deliveries also carry a signature made with the previous secret.`,
    ...secretLines(subscription.secret)
  ]
})

const deliveryLine = (d: WebhookDelivery) => {
  const next = d.status === "pending" && d.nextAttemptAt !== null ? `, next attempt ${iso(d.nextAttemptAt)}` : ""
  const why = d.failureReason === null ? "" : ` (${d.failureReason.replace(/_/g, " ")})`
  return `${d.id}  ${d.status.padEnd(9)}  ${d.eventType}  event ${d.eventId}  ${d.attempts} attempt${d.attempts === 1 ? "" : "s"}, created ${iso(d.createdAt)}${next}${why}`
}

export const deliveriesListed = (id: string, status: DeliveryStatus | undefined, deliveries: ReadonlyArray<WebhookDelivery>): Output => ({
  json: encodeDeliveries(deliveries),
  human: deliveries.length === 0 ? [`No ${status === undefined ? "" : `${status} `}delivery for webhook ${id}.`] : deliveries.map(deliveryLine)
})

/** The answer's first line, short: the whole of its first kilobyte is in `--json`. */
const excerpt = (body: string) => {
  const line = body.split(/\r?\n/, 1)[0] ?? ""
  return line.length > 80 ? `${line.slice(0, 80)}...` : line
}

const attemptLine = (a: DeliveryAttempt) => {
  const outcome = a.statusCode === null ? `no answer: ${a.error ?? "unknown"}` : `${a.statusCode}`
  const body = a.statusCode === null || a.responseBody === "" ? "" : `  ${excerpt(a.responseBody)}`
  return `#${a.attempt}  ${iso(a.startedAt)}  ${outcome} in ${a.durationMs} ms${body}`
}

export const attemptsListed = (deliveryId: string, attempts: ReadonlyArray<DeliveryAttempt>): Output => ({
  json: encodeAttempts(attempts),
  human: attempts.length === 0 ? [`No attempt of delivery ${deliveryId} yet.`] : attempts.map(attemptLine)
})

export const redelivered = (delivery: WebhookDelivery): Output => ({
  json: encodeDelivery(delivery),
  human: [`Delivery ${delivery.id} (${delivery.eventType}) queued again; ${delivery.attempts} attempt${delivery.attempts === 1 ? "" : "s"} so far.`]
})

export const recovered = (id: string, since: DateTime.Utc, result: RecoverResult): Output => ({
  json: encodeRecovered(result),
  human: [`${result.redelivered} ${result.redelivered === 1 ? "delivery" : "deliveries"} of webhook ${id} since ${iso(since)} re-sent.`]
})
