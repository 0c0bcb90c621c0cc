import { CreateScimTokenRequest, GatewayAdminApi } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { ScimTokenDesk } from "../../ports/ScimTokenDesk.js"
import { memberDesk } from "./Upstream.js"

/** SCIM tokens through the gateway's admin API, each call signed for the member. */
export const ScimTokenDeskHttp = Layer.effect(
  ScimTokenDesk,
  Effect.gen(function*() {
    const { gatewayAdminUrl } = yield* ConsoleSettings
    const gateway = yield* memberDesk(GatewayAdminApi, gatewayAdminUrl, "gatewayAdmin")
    return ScimTokenDesk.of({
      list: (actor) => gateway.outage(actor.email, (g) => g.listScimTokens({ params: { tenantId: actor.tenantId } })),
      create: (actor, label) =>
        gateway.outcome(actor.email, (g) => g.createScimToken({ params: { tenantId: actor.tenantId }, payload: new CreateScimTokenRequest({ label }) })),
      revoke: (actor, id) => gateway.outcome(actor.email, (g) => g.revokeScimToken({ params: { tenantId: actor.tenantId, id } }))
    })
  })
)
