import { CreatePartnerClientRequest, GatewayAdminApi, RotatePartnerSecretRequest } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { PartnerDesk } from "../../ports/PartnerDesk.js"
import { memberDesk } from "./Upstream.js"

/** Partner clients through the gateway's admin API, each call signed for the member. */
export const PartnerDeskHttp = Layer.effect(
  PartnerDesk,
  Effect.gen(function*() {
    const { gatewayAdminUrl } = yield* ConsoleSettings
    const gateway = yield* memberDesk(GatewayAdminApi, gatewayAdminUrl, "gatewayAdmin")
    return PartnerDesk.of({
      list: (actor) => gateway.outage(actor.email, (g) => g.listPartnerClients({ params: { tenantId: actor.tenantId } })),
      create: (actor, name, scope) =>
        gateway.outcome(actor.email, (g) => g.createPartnerClient({ params: { tenantId: actor.tenantId }, payload: new CreatePartnerClientRequest({ name, scope }) })),
      rotateSecret: (actor, clientId, graceSeconds) =>
        gateway.outcome(actor.email, (g) => g.rotatePartnerSecret({ params: { clientId }, payload: new RotatePartnerSecretRequest({ graceSeconds }) })),
      setEnabled: (actor, clientId, enabled) =>
        gateway.outcome(actor.email, (g) => enabled ? g.enablePartnerClient({ params: { clientId } }) : g.disablePartnerClient({ params: { clientId } }))
    })
  })
)
