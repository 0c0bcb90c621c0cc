import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Caller, GatewayAdminApi } from "@portfolio/domain"
import { requestOrigin, serveApi, wholeOrPage } from "@portfolio/platform/http"
import { OperatorAuthenticationLive } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"
import type { AdminCall } from "../../domain/OperatorActions.js"
import { RateLimitHealth } from "../../ports/rate-limit/RateLimitHealth.js"
import { createPartnerClient, listPartnerClients, rotatePartnerSecret, setPartnerClientEnabled } from "../../usecases/ManagePartnerClients.js"
import { createPat, listPats, revokePat } from "../../usecases/ManagePats.js"
import { createScimToken, listScimTokens, revokeScimToken } from "../../usecases/ManageScimTokens.js"
import { approvePatRequest, denyPatRequest, filePatRequest, listPatRequests, listPatRequestsPage } from "../../usecases/PatRequests.js"
import { listSecurityEvents } from "../../usecases/SecurityLog.js"

/**
 * Who makes this call, for the security log: the assertion's subject, and the socket's peer. No
 * proxy stands in front of the admin port (`TRUSTED_PROXY_HOPS` is the public port's), so an
 * X-Forwarded-For there is only the caller's claim, as on provisioning's admin port.
 */
const adminCall = Effect.gen(function*() {
  const caller = yield* Caller
  const request = yield* HttpServerRequest.HttpServerRequest
  const call: AdminCall = { subject: caller.subject, ...requestOrigin(request, 0) }
  return call
})

const GatewayAdminHandlersLive = HttpApiBuilder.group(GatewayAdminApi, "gatewayAdmin", (handlers) =>
  handlers
    .handle("createPat", ({ payload }) => Effect.flatMap(adminCall, (by) => createPat(payload, by)))
    .handle("listPats", ({ urlParams }) => listPats(urlParams))
    .handle("revokePat", ({ payload }) => Effect.flatMap(adminCall, (by) => revokePat(payload.tokenOrId, by, payload.holder)))
    .handle("filePatRequest", ({ payload }) => Effect.flatMap(adminCall, (by) => filePatRequest(payload, by)))
    .handle("listPatRequests", ({ urlParams: { cursor, limit, ...filter } }) =>
      wholeOrPage({ cursor, limit }, () => listPatRequests(filter), () => listPatRequestsPage(filter, { cursor, limit })))
    .handle("approvePatRequest", ({ path, payload }) => Effect.flatMap(adminCall, (by) => approvePatRequest(by, path.id, payload.approver)))
    .handle("denyPatRequest", ({ path, payload }) =>
      Effect.flatMap(adminCall, (by) => denyPatRequest(by, path.id, payload.approver, payload.reason)))
    .handle("createPartnerClient", ({ path, payload }) => Effect.flatMap(adminCall, (by) => createPartnerClient(path.tenantId, payload, by)))
    .handle("listPartnerClients", ({ path }) => listPartnerClients(path.tenantId))
    .handle("rotatePartnerSecret", ({ path, payload }) =>
      Effect.flatMap(adminCall, (by) => rotatePartnerSecret(path.clientId, payload.graceSeconds, by)))
    .handle("disablePartnerClient", ({ path }) => Effect.flatMap(adminCall, (by) => setPartnerClientEnabled(path.clientId, false, by)))
    .handle("enablePartnerClient", ({ path }) => Effect.flatMap(adminCall, (by) => setPartnerClientEnabled(path.clientId, true, by)))
    .handle("createScimToken", ({ path, payload }) => Effect.flatMap(adminCall, (by) => createScimToken(path.tenantId, payload, by)))
    .handle("listScimTokens", ({ path }) => listScimTokens(path.tenantId))
    .handle("revokeScimToken", ({ path }) => Effect.flatMap(adminCall, (by) => revokeScimToken(path.tenantId, path.id, by)))
    .handle("listGatewaySecurityEvents", ({ path, urlParams }) => listSecurityEvents(path.tenantId, urlParams)))

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
 * The PAT, PAT request, partner client and SCIM token administration API on ADMIN_PORT, for operators (and, on
 * behalf of signed-in members, the console) only, with the gateway's probes; the public port never routes it.
 */
export const AdminServerLive = <E, R>(ready: Effect.Effect<unknown, E, R>) =>
  serveApi({ apiLayer: GatewayAdminApiLive, ready, readyDetail: rateLimitDetail, service: "gateway", server: "admin" })
