import { WebhookAdminApi } from "@portfolio/domain"
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
      list: (actor) => asOutage(Effect.flatMap(dispatcher(actor), (d) => d.listSubscriptions({ path: { tenantId: actor.tenantId } }))),
      create: (actor, draft) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) =>
          d.createSubscription({
            path: { tenantId: actor.tenantId },
            payload: { url: draft.url, description: draft.description, ...(draft.events.length === 0 ? {} : { events: draft.events as [typeof draft.events[number], ...Array<typeof draft.events[number]>] }) }
          }))),
      get: (actor, id) =>
        Effect.flatMap(dispatcher(actor), (d) => d.getSubscription({ path: { id } })).pipe(
          Effect.map(Option.some),
          Effect.catchTag("NotFound", () => Effect.succeed(Option.none())),
          asOutage
        ),
      update: (actor, id, draft) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) =>
          d.updateSubscription({
            path: { id },
            payload: {
              url: draft.url,
              description: draft.description,
              ...(draft.events.length === 0 ? {} : { events: draft.events as [typeof draft.events[number], ...Array<typeof draft.events[number]>] })
            }
          }))),
      setEnabled: (actor, id, enabled) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) => enabled ? d.enableSubscription({ path: { id } }) : d.disableSubscription({ path: { id } }))),
      rotateSecret: (actor, id, graceSeconds) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) => d.rotateSecret({ path: { id }, payload: { graceSeconds } }))),
      deliveries: (actor, id, limit) => asOutage(Effect.flatMap(dispatcher(actor), (d) => d.listDeliveries({ path: { id }, urlParams: { limit } }))),
      attempts: (actor, deliveryId) => asOutage(Effect.flatMap(dispatcher(actor), (d) => d.listAttempts({ path: { id: deliveryId } }))),
      redeliver: (actor, deliveryId) => asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) => d.redeliver({ path: { id: deliveryId } }))),
      recover: (actor, id, sinceMs) =>
        asMemberOutcome(Effect.flatMap(dispatcher(actor), (d) => d.recoverDeliveries({ path: { id }, payload: { since: DateTime.unsafeMake(sinceMs) } }))).pipe(
          Effect.map((result) => result.redelivered)
        )
    })
  })
)
