import { HttpApiBuilder } from "@effect/platform"
import { GatewayAdminApi } from "@portfolio/domain"
import { OperatorAuthenticationLive, serveApi } from "@portfolio/platform"
import { type Effect, Layer } from "effect"
import { createPat, revokePat } from "../../usecases/ManagePats.js"

const GatewayAdminHandlersLive = HttpApiBuilder.group(GatewayAdminApi, "gatewayAdmin", (handlers) =>
  handlers
    .handle("createPat", ({ payload }) => createPat(payload))
    .handle("revokePat", ({ payload }) => revokePat(payload.tokenOrId)))

export const GatewayAdminApiLive = HttpApiBuilder.api(GatewayAdminApi).pipe(
  Layer.provide(GatewayAdminHandlersLive),
  Layer.provide(OperatorAuthenticationLive)
)

/** The PAT administration API on ADMIN_PORT, for operators only; the public port never routes it. */
export const adminServer = <E, R>(ready: Effect.Effect<unknown, E, R>) =>
  serveApi({ apiLayer: GatewayAdminApiLive, ready, service: "gateway", server: "admin" })
