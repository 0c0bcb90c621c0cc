import { HttpApiBuilder } from "effect/http-api"
import { GatewayAdminApi } from "@portfolio/domain"
import { serveApi } from "@portfolio/platform/http"
import { OperatorAuthenticationLive } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"
import { RateLimitHealth } from "../../ports/rate-limit/RateLimitHealth.js"
import { AdminHandlersLive } from "./AdminHandlers.js"
import { PublicServerLive } from "./PublicServer.js"

export const AdminHttpLive = HttpApiBuilder.layer(GatewayAdminApi).pipe(
  Layer.provide(AdminHandlersLive),
  Layer.provide(OperatorAuthenticationLive)
)

/**
 * The rate limiter's condition in `/readyz`: a gateway counting alone while NATS is away still
 * serves (readiness holds), but an SRE reads there that the limit is each replica's share.
 */
const rateLimitDetail = Effect.map(Effect.flatMap(RateLimitHealth, (health) => health.condition), (rateLimit) => ({ rateLimit }))

/**
 * The PAT, PAT request, partner client and SCIM token administration API on ADMIN_PORT, for operators (and, on
 * behalf of signed-in members, the console) only, with the gateway's probes; the public port never routes it.
 */
const adminServer = <E, R>(ready: Effect.Effect<unknown, E, R>) =>
  serveApi({ api: GatewayAdminApi, apiLayer: AdminHttpLive, ready, readyDetail: rateLimitDetail, service: "gateway", server: "admin" })

/**
 * The gateway's servers: the public one (PublicServer.ts, its own server: the proxy is no
 * HttpApi) and the admin API's.
 */
export const servers = <E, R>(ready: Effect.Effect<unknown, E, R>) => [PublicServerLive, adminServer(ready)] as const
