import { ActorRequest, ProvisioningAdminApi, SetSsoConnectionAsRequest } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { SsoDesk } from "../../ports/SsoDesk.js"
import type { Actor } from "../../ports/TokenDesk.js"
import { memberDesk, orNone } from "./Upstream.js"

/** The tenant's single sign-on connection through provisioning's admin API, made as the member. */
export const SsoDeskHttp = Layer.effect(
  SsoDesk,
  Effect.gen(function*() {
    const { provisioningAdminUrl } = yield* ConsoleSettings
    const provisioning = yield* memberDesk(ProvisioningAdminApi, provisioningAdminUrl, "provisioningAdmin")
    const path = (actor: Actor) => ({ tenantId: actor.tenantId })
    return SsoDesk.of({
      // Provisioning's 404 here only ever means the tenant has no connection: the member's membership names the tenant.
      get: (actor) => provisioning.outcome(actor.email, (p) => orNone(p.getSsoConnectionAs({ params: path(actor), query: { actorSub: actor.userSub } }))),
      set: (actor, request) =>
        provisioning.outcome(actor.email, (p) => p.setSsoConnectionAs({ params: path(actor), payload: new SetSsoConnectionAsRequest({ ...request, actorSub: actor.userSub }) })),
      disable: (actor) =>
        provisioning.outcome(actor.email, (p) => p.disableSsoConnectionAs({ params: path(actor), payload: new ActorRequest({ actorSub: actor.userSub }) })).pipe(Effect.asVoid)
    })
  })
)
