import { HttpApiBuilder } from "effect/http-api"
import { ReferentialAdminApi } from "@portfolio/domain"
import { serveApi } from "@portfolio/platform/http"
import { AssertionAuthenticationLive, OperatorAuthenticationLive } from "@portfolio/platform/security"
import { type Effect, Layer } from "effect"
import { AdminHandlersLive } from "./AdminHandlers.js"
import { PublicHandlersLive } from "./PublicHandlers.js"
import { ReferentialPublicApi } from "./ReferentialPublicApi.js"

/** The public API of the referential, authenticated by the gateway's signed assertion. */
export const PublicHttpLive = HttpApiBuilder.layer(ReferentialPublicApi).pipe(
  Layer.provide(PublicHandlersLive),
  Layer.provide(AssertionAuthenticationLive)
)

/** The referential's admin API, for operator assertions only. */
export const AdminHttpLive = HttpApiBuilder.layer(ReferentialAdminApi).pipe(
  Layer.provide(AdminHandlersLive),
  Layer.provide(OperatorAuthenticationLive)
)

export const servers = <E, R>(ready: Effect.Effect<unknown, E, R>) => [
  serveApi({ api: ReferentialPublicApi, apiLayer: PublicHttpLive, ready, service: "referential", server: "api" }),
  serveApi({ api: ReferentialAdminApi, apiLayer: AdminHttpLive, ready, service: "referential", server: "admin" })
] as const
