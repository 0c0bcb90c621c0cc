import { CreateSubscriptionRequest, RecoverRequest, RotateSecretRequest, UpdateSubscriptionRequest, WebhookAdminApi } from "@portfolio/domain"
import { DateTime, Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { WebhookDesk } from "../../ports/WebhookDesk.js"
import { memberDesk, orNone } from "./Upstream.js"

/** Subscriptions through the dispatcher's admin API, each call signed for the member. */
export const WebhookDeskHttp = Layer.effect(
  WebhookDesk,
  Effect.gen(function*() {
    const { webhookAdminUrl } = yield* ConsoleSettings
    const dispatcher = yield* memberDesk(WebhookAdminApi, webhookAdminUrl, "webhookAdmin")
    return WebhookDesk.of({
      list: (actor) => dispatcher.outage(actor.email, (d) => d.listSubscriptions({ params: { tenantId: actor.tenantId } })),
      create: (actor, draft) =>
        dispatcher.outcome(actor.email, (d) =>
          d.createSubscription({
            params: { tenantId: actor.tenantId },
            payload: new CreateSubscriptionRequest({
              url: draft.url,
              description: draft.description,
              ...(draft.events.length === 0 ? {} : { events: draft.events as [typeof draft.events[number], ...Array<typeof draft.events[number]>] })
            })
          })),
      get: (actor, id) => dispatcher.outage(actor.email, (d) => orNone(d.getSubscription({ params: { id } }))),
      update: (actor, id, draft) =>
        dispatcher.outcome(actor.email, (d) =>
          d.updateSubscription({
            params: { id },
            payload: new UpdateSubscriptionRequest({
              url: draft.url,
              description: draft.description,
              ...(draft.events.length === 0 ? {} : { events: draft.events as [typeof draft.events[number], ...Array<typeof draft.events[number]>] })
            })
          })),
      setEnabled: (actor, id, enabled) =>
        dispatcher.outcome(actor.email, (d) => enabled ? d.enableSubscription({ params: { id } }) : d.disableSubscription({ params: { id } })),
      rotateSecret: (actor, id, graceSeconds) =>
        dispatcher.outcome(actor.email, (d) => d.rotateSecret({ params: { id }, payload: new RotateSecretRequest({ graceSeconds }) })),
      deliveries: (actor, id, limit) => dispatcher.outage(actor.email, (d) => d.listDeliveries({ params: { id }, query: { limit } })),
      attempts: (actor, deliveryId) => dispatcher.outage(actor.email, (d) => d.listAttempts({ params: { id: deliveryId } })),
      redeliver: (actor, deliveryId) => dispatcher.outcome(actor.email, (d) => d.redeliver({ params: { id: deliveryId } })),
      recover: (actor, id, sinceMs) =>
        dispatcher.outcome(actor.email, (d) => d.recoverDeliveries({ params: { id }, payload: new RecoverRequest({ since: DateTime.makeUnsafe(sinceMs) }) })).pipe(
          Effect.map((result) => result.redelivered)
        )
    })
  })
)
