import {
  CreateSubscriptionRequest,
  DeliveriesQuery,
  type DeliveryStatus,
  InvalidRequest,
  RecoverRequest,
  RotateSecretRequest,
  UpdateSubscriptionRequest,
  type WebhookEventKind
} from "@portfolio/domain"
import { type DateTime, Effect, Schema } from "effect"
import { AdminClients } from "./AdminClients.js"
import { getTenant } from "./Operations.js"

/**
 * The operator's webhook operations, on the webhook-dispatcher's admin API. Subscriptions belong to
 * a tenant by id, so the slug is resolved through provisioning first; afterwards a subscription or
 * a delivery is reached by its own id.
 */

type EventKinds = readonly [WebhookEventKind, ...Array<WebhookEventKind>]

export const createWebhook = Effect.fn("createWebhook")(function*(input: {
  readonly tenant: string
  readonly url: string
  readonly events: EventKinds | undefined
  readonly description: string | undefined
}) {
  const { webhook } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  const subscription = yield* webhook.webhookAdmin.createSubscription({
    params: { tenantId: tenant.id },
    payload: new CreateSubscriptionRequest({
      url: input.url,
      ...(input.events === undefined ? {} : { events: input.events }),
      ...(input.description === undefined ? {} : { description: input.description })
    })
  })
  return { tenant, subscription }
})

export const listWebhooks = Effect.fn("listWebhooks")(function*(slug: string) {
  const { webhook } = yield* AdminClients
  const tenant = yield* getTenant(slug)
  const subscriptions = yield* webhook.webhookAdmin.listSubscriptions({ params: { tenantId: tenant.id } })
  return { tenant, subscriptions }
})

export const getWebhook = Effect.fn("getWebhook")(function*(id: string) {
  const { webhook } = yield* AdminClients
  return yield* webhook.webhookAdmin.getSubscription({ params: { id } })
})

export const updateWebhook = Effect.fn("updateWebhook")(function*(id: string, changes: {
  readonly url: string | undefined
  readonly events: EventKinds | undefined
  readonly description: string | undefined
}) {
  const { webhook } = yield* AdminClients
  if (changes.url === undefined && changes.events === undefined && changes.description === undefined) {
    return yield* new InvalidRequest({ detail: "Nothing to update: give --url, --events or --description." })
  }
  return yield* webhook.webhookAdmin.updateSubscription({
    params: { id },
    payload: new UpdateSubscriptionRequest({
      ...(changes.url === undefined ? {} : { url: changes.url }),
      ...(changes.events === undefined ? {} : { events: changes.events }),
      ...(changes.description === undefined ? {} : { description: changes.description })
    })
  })
})

export const deleteWebhook = Effect.fn("deleteWebhook")(function*(id: string) {
  const { webhook } = yield* AdminClients
  yield* webhook.webhookAdmin.deleteSubscription({ params: { id } })
})

export const setWebhookEnabled = Effect.fn("setWebhookEnabled")(function*(id: string, enabled: boolean) {
  const { webhook } = yield* AdminClients
  return yield* enabled
    ? webhook.webhookAdmin.enableSubscription({ params: { id } })
    : webhook.webhookAdmin.disableSubscription({ params: { id } })
})

export const rotateWebhookSecret = Effect.fn("rotateWebhookSecret")(function*(id: string, graceSeconds: number) {
  const { webhook } = yield* AdminClients
  return yield* webhook.webhookAdmin.rotateSecret({ params: { id }, payload: new RotateSecretRequest({ graceSeconds }) })
})

/** The typed client wants a limit; without `--limit` it sends the contract's own default, read from it. */
const defaultDeliveriesLimit = Schema.decodeSync(DeliveriesQuery)({}).limit

export const listWebhookDeliveries = Effect.fn("listWebhookDeliveries")(function*(id: string, filter: {
  readonly status: DeliveryStatus | undefined
  readonly limit: number | undefined
}) {
  const { webhook } = yield* AdminClients
  return yield* webhook.webhookAdmin.listDeliveries({
    params: { id },
    query: { ...(filter.status === undefined ? {} : { status: filter.status }), limit: filter.limit ?? defaultDeliveriesLimit }
  })
})

export const listDeliveryAttempts = Effect.fn("listDeliveryAttempts")(function*(deliveryId: string) {
  const { webhook } = yield* AdminClients
  return yield* webhook.webhookAdmin.listAttempts({ params: { id: deliveryId } })
})

export const redeliver = Effect.fn("redeliver")(function*(deliveryId: string) {
  const { webhook } = yield* AdminClients
  return yield* webhook.webhookAdmin.redeliver({ params: { id: deliveryId } })
})

export const recoverWebhookDeliveries = Effect.fn("recoverWebhookDeliveries")(function*(id: string, since: DateTime.Utc) {
  const { webhook } = yield* AdminClients
  return yield* webhook.webhookAdmin.recoverDeliveries({ params: { id }, payload: new RecoverRequest({ since }) })
})
