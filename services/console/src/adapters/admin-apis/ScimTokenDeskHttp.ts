import { CreateScimTokenRequest, GatewayAdminApi } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { ScimTokenDesk } from "../../ports/ScimTokenDesk.js"
import type { Actor } from "../../ports/TokenDesk.js"
import { asMemberOutcome, asOutage, memberClients } from "./Upstream.js"

/** SCIM tokens through the gateway's admin API, each call signed for the member. */
export const ScimTokenDeskHttp = Layer.effect(
  ScimTokenDesk,
  Effect.gen(function*() {
    const { gatewayAdminUrl } = yield* ConsoleSettings
    const clients = yield* memberClients(GatewayAdminApi, gatewayAdminUrl)
    const gateway = (actor: Actor) => Effect.map(clients(actor.email), (client) => client.gatewayAdmin)
    return ScimTokenDesk.of({
      list: (actor) => asOutage(Effect.flatMap(gateway(actor), (g) => g.listScimTokens({ params: { tenantId: actor.tenantId } }))),
      create: (actor, label) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) => g.createScimToken({ params: { tenantId: actor.tenantId }, payload: new CreateScimTokenRequest({ label }) }))),
      revoke: (actor, id) => asMemberOutcome(Effect.flatMap(gateway(actor), (g) => g.revokeScimToken({ params: { tenantId: actor.tenantId, id } })))
    })
  })
)
