import { CreateSubscriptionRequest, RecoverRequest, RotateSecretRequest, UpdateSubscriptionRequest, WebhookAdminApi } from "@portfolio/domain"
import { DateTime, Effect, Layer, Option } from "effect"
import { ConsoleSettings } from "../../Config.js"
import type { Actor } from "../../ports/TokenDesk.js"
import { WebhookDesk } from "../../ports/WebhookDesk.js"
import { asMemberOutcome, memberClients, asOutage } from "./Upstream.js"

/** Subscriptions through the dispatcher's admin API, each call signed for the member. */
export const WebhookDeskHttp = Layer.effect(
  WebhookDesk,
  Effect.gen(function*() {
    const { webhookAdminUrl } = yield* ConsoleSettings
    const clients = yield* memberClients(WebhookAdminApi, webhookAdminUrl)
    const dispatcher = (actor: Actor) => Effect.map(clients(actor.email), (client) => client.webhookAdmin)
    return WebhookDesk.of({
      list: (actor) => asOutage(Effect.flatMap(dispatcher(actor), (d) => d.listSubscriptions({ params: { tenantId: actor.tenantId } }))),
      create: (actor, draft) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) =>
          d.createSubscription({
            params: { tenantId: actor.tenantId },
            payload: new CreateSubscriptionRequest({
              url: draft.url,
              description: draft.description,
              ...(draft.events.length === 0 ? {} : { events: draft.events as [typeof draft.events[number], ...Array<typeof draft.events[number]>] })
            })
          }))),
      get: (actor, id) =>
        Effect.flatMap(dispatcher(actor), (d) => d.getSubscription({ params: { id } })).pipe(
          Effect.map(Option.some),
          Effect.catchTag("NotFound", () => Effect.succeed(Option.none())),
          asOutage
        ),
      update: (actor, id, draft) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) =>
          d.updateSubscription({
            params: { id },
            payload: new UpdateSubscriptionRequest({
              url: draft.url,
              description: draft.description,
              ...(draft.events.length === 0 ? {} : { events: draft.events as [typeof draft.events[number], ...Array<typeof draft.events[number]>] })
            })
          }))),
      setEnabled: (actor, id, enabled) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) => enabled ? d.enableSubscription({ params: { id } }) : d.disableSubscription({ params: { id } }))),
      rotateSecret: (actor, id, graceSeconds) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) => d.rotateSecret({ params: { id }, payload: new RotateSecretRequest({ graceSeconds }) }))),
      deliveries: (actor, id, limit) => asOutage(Effect.flatMap(dispatcher(actor), (d) => d.listDeliveries({ params: { id }, query: { limit } }))),
      attempts: (actor, deliveryId) => asOutage(Effect.flatMap(dispatcher(actor), (d) => d.listAttempts({ params: { id: deliveryId } }))),
      redeliver: (actor, deliveryId) => asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) => d.redeliver({ params: { id: deliveryId } }))),
      recover: (actor, id, sinceMs) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) => d.recoverDeliveries({ params: { id }, payload: new RecoverRequest({ since: DateTime.makeUnsafe(sinceMs) }) }))).pipe(
          Effect.map((result) => result.redelivered)
        )
    })
  })
)
