import { HttpApiBuilder } from "@effect/platform"
import { GatewayAdminApi } from "@portfolio/domain"
import { OperatorAuthenticationLive, serveApi } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { RateLimitHealth } from "../../ports/RateLimitHealth.js"
import { createPat, revokePat } from "../../usecases/ManagePats.js"

const GatewayAdminHandlersLive = HttpApiBuilder.group(GatewayAdminApi, "gatewayAdmin", (handlers) =>
  handlers
    .handle("createPat", ({ payload }) => createPat(payload))
    .handle("revokePat", ({ payload }) => revokePat(payload.tokenOrId)))

export const GatewayAdminApiLive = HttpApiBuilder.api(GatewayAdminApi).pipe(
  Layer.provide(GatewayAdminHandlersLive),
  Layer.provide(OperatorAuthenticationLive)
)

/**
 * The rate limiter's condition in `/readyz`: a gateway counting alone while NATS is away still
 * serves (readiness holds), but an SRE reads there that the limit is each replica's share.
 */
const rateLimitDetail = Effect.map(Effect.flatMap(RateLimitHealth, (health) => health.condition), (rateLimit) => ({ rateLimit }))

/**
 * The PAT administration API on ADMIN_PORT, for operators only, with the gateway's probes; the
 * public port never routes it.
 */
export const adminServer = <E, R>(ready: Effect.Effect<unknown, E, R>) =>
  serveApi({ apiLayer: GatewayAdminApiLive, ready, readyDetail: rateLimitDetail, service: "gateway", server: "admin" })
