import { HttpClient } from "@effect/platform"
import { GatewayAdminApi } from "@portfolio/domain"
import { InternalSecret } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { PartnerDesk } from "../../ports/PartnerDesk.js"
import type { Actor } from "../../ports/TokenDesk.js"
import { adminClient, asMemberOutcome, asOutage } from "./Upstream.js"

/** Partner clients through the gateway's admin API, each call signed for the member. */
export const PartnerDeskHttp = Layer.effect(
  PartnerDesk,
  Effect.gen(function*() {
    const { gatewayAdminUrl } = yield* ConsoleSettings
    const secret = yield* InternalSecret
    const http = yield* HttpClient.HttpClient
    const gateway = (actor: Actor) =>
      adminClient(GatewayAdminApi, { baseUrl: gatewayAdminUrl, secret, memberEmail: actor.email }).pipe(
        Effect.map((client) => client.gatewayAdmin),
        Effect.provideService(HttpClient.HttpClient, http)
      )
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
