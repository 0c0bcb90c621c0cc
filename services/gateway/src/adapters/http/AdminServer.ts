import { HttpApiBuilder } from "@effect/platform"
import { Caller, GatewayAdminApi } from "@portfolio/domain"
import { OperatorAuthenticationLive, serveApi, wholeOrPage } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { RateLimitHealth } from "../../ports/RateLimitHealth.js"
import { createPartnerClient, listPartnerClients, rotatePartnerSecret, setPartnerClientEnabled } from "../../usecases/ManagePartnerClients.js"
import { createPat, listPats, revokePat } from "../../usecases/ManagePats.js"
import { approvePatRequest, denyPatRequest, filePatRequest, listPatRequests, listPatRequestsPage } from "../../usecases/PatRequests.js"

const GatewayAdminHandlersLive = HttpApiBuilder.group(GatewayAdminApi, "gatewayAdmin", (handlers) =>
  handlers
    .handle("createPat", ({ payload }) => createPat(payload))
    .handle("listPats", ({ urlParams }) => listPats(urlParams))
    .handle("revokePat", ({ payload }) => revokePat(payload.tokenOrId, payload.holder))
    .handle("filePatRequest", ({ payload }) => filePatRequest(payload))
    .handle("listPatRequests", ({ urlParams: { cursor, limit, ...filter } }) =>
      wholeOrPage({ cursor, limit }, () => listPatRequests(filter), () => listPatRequestsPage(filter, { cursor, limit })))
    .handle("approvePatRequest", ({ path, payload }) => Effect.flatMap(Caller, (caller) => approvePatRequest(caller, path.id, payload.approver)))
    .handle("denyPatRequest", ({ path, payload }) =>
      Effect.flatMap(Caller, (caller) => denyPatRequest(caller, path.id, payload.approver, payload.reason)))
    .handle("createPartnerClient", ({ path, payload }) => createPartnerClient(path.tenantId, payload))
    .handle("listPartnerClients", ({ path }) => listPartnerClients(path.tenantId))
    .handle("rotatePartnerSecret", ({ path, payload }) => rotatePartnerSecret(path.clientId, payload.graceSeconds))
    .handle("disablePartnerClient", ({ path }) => setPartnerClientEnabled(path.clientId, false))
    .handle("enablePartnerClient", ({ path }) => setPartnerClientEnabled(path.clientId, true)))

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
 * The PAT, PAT request and partner client administration API on ADMIN_PORT, for operators (and, on
 * behalf of signed-in members, the console) only, with the gateway's probes; the public port never routes it.
 */
export const adminServer = <E, R>(ready: Effect.Effect<unknown, E, R>) =>
  serveApi({ apiLayer: GatewayAdminApiLive, ready, readyDetail: rateLimitDetail, service: "gateway", server: "admin" })
