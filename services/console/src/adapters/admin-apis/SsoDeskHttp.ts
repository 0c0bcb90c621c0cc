import { ActorRequest, ProvisioningAdminApi, SetSsoConnectionAsRequest } from "@portfolio/domain"
import { Effect, Layer, Option } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { SsoDesk } from "../../ports/SsoDesk.js"
import type { Actor } from "../../ports/TokenDesk.js"
import { asMemberOutcome, memberClients } from "./Upstream.js"

/** The tenant's single sign-on connection through provisioning's admin API, made as the member. */
export const SsoDeskHttp = Layer.effect(
  SsoDesk,
  Effect.gen(function*() {
    const { provisioningAdminUrl } = yield* ConsoleSettings
    const clients = yield* memberClients(ProvisioningAdminApi, provisioningAdminUrl)
    const provisioning = (actor: Actor) => Effect.map(clients(actor.email), (client) => client.provisioningAdmin)
    const path = (actor: Actor) => ({ tenantId: actor.tenantId })
    return SsoDesk.of({
      get: (actor) =>
        Effect.flatMap(provisioning(actor), (p) => p.getSsoConnectionAs({ params: path(actor), query: { actorSub: actor.userSub } })).pipe(
          Effect.map(Option.some),
          // Provisioning's 404 here only ever means the tenant has no connection: the member's membership names the tenant.
          Effect.catchTag("NotFound", () => Effect.succeed(Option.none())),
          asMemberOutcome
        ),
      set: (actor, request) =>
        asMemberOutcome(Effect.flatMap(provisioning(actor), (p) => p.setSsoConnectionAs({ params: path(actor), payload: new SetSsoConnectionAsRequest({ ...request, actorSub: actor.userSub }) }))),
      disable: (actor) =>
        asMemberOutcome(Effect.flatMap(provisioning(actor), (p) => p.disableSsoConnectionAs({ params: path(actor), payload: new ActorRequest({ actorSub: actor.userSub }) }))).pipe(
          Effect.asVoid
        )
    })
  })
)
