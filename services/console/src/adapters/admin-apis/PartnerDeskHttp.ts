import { GatewayAdminApi } from "@portfolio/domain"
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
      list: (actor) => asOutage(Effect.flatMap(gateway(actor), (g) => g.listPartnerClients({ path: { tenantId: actor.tenantId } }))),
      create: (actor, name, scope) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) => g.createPartnerClient({ path: { tenantId: actor.tenantId }, payload: { name, scope } }))),
      rotateSecret: (actor, clientId, graceSeconds) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) => g.rotatePartnerSecret({ path: { clientId }, payload: { graceSeconds } }))),
      setEnabled: (actor, clientId, enabled) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) =>
          enabled ? g.enablePartnerClient({ path: { clientId } }) : g.disablePartnerClient({ path: { clientId } })))
    })
  })
)
