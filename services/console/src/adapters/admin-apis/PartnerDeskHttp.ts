import { CreatePartnerClientRequest, GatewayAdminApi, RotatePartnerSecretRequest } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { PartnerDesk } from "../../ports/PartnerDesk.js"
import type { Actor } from "../../ports/TokenDesk.js"
import { asMemberOutcome, memberClients, asOutage } from "./Upstream.js"

/** Partner clients through the gateway's admin API, each call signed for the member. */
export const PartnerDeskHttp = Layer.effect(
  PartnerDesk,
  Effect.gen(function*() {
    const { gatewayAdminUrl } = yield* ConsoleSettings
    const clients = yield* memberClients(GatewayAdminApi, gatewayAdminUrl)
    const gateway = (actor: Actor) => Effect.map(clients(actor.email), (client) => client.gatewayAdmin)
    return PartnerDesk.of({
      list: (actor) => asOutage(Effect.flatMap(gateway(actor), (g) => g.listPartnerClients({ params: { tenantId: actor.tenantId } }))),
      create: (actor, name, scope) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) => g.createPartnerClient({ params: { tenantId: actor.tenantId }, payload: new CreatePartnerClientRequest({ name, scope }) }))),
      rotateSecret: (actor, clientId, graceSeconds) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) => g.rotatePartnerSecret({ params: { clientId }, payload: new RotatePartnerSecretRequest({ graceSeconds }) }))),
      setEnabled: (actor, clientId, enabled) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) =>
          enabled ? g.enablePartnerClient({ params: { clientId } }) : g.disablePartnerClient({ params: { clientId } })))
    })
  })
)
