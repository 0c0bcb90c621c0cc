import { HttpApiBuilder } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { Caller, GatewayAdminApi } from "@portfolio/domain"
import { requestOrigin, wholeOrPage } from "@portfolio/platform/http"
import { Effect } from "effect"
import type { AdminCall } from "../../domain/OperatorActions.js"
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

/** The handlers of the gateway's admin API. */
export const AdminHandlersLive = HttpApiBuilder.group(GatewayAdminApi, "gatewayAdmin", (handlers) =>
  handlers
    .handle("createPat", ({ payload }) => Effect.flatMap(adminCall, (by) => createPat(payload, by)))
    .handle("listPats", ({ query }) => listPats(query))
    .handle("revokePat", ({ payload }) => Effect.flatMap(adminCall, (by) => revokePat(payload.tokenOrId, by, payload.holder)))
    .handle("filePatRequest", ({ payload }) => Effect.flatMap(adminCall, (by) => filePatRequest(payload, by)))
    .handle("listPatRequests", ({ query }) => {
      const { cursor: _cursor, limit: _limit, ...filter } = query
      return wholeOrPage(query, () => listPatRequests(filter), () => listPatRequestsPage(filter, query))
    })
    .handle("approvePatRequest", ({ params, payload }) => Effect.flatMap(adminCall, (by) => approvePatRequest(by, params.id, payload.approver)))
    .handle("denyPatRequest", ({ params, payload }) =>
      Effect.flatMap(adminCall, (by) => denyPatRequest(by, params.id, payload.approver, payload.reason)))
    .handle("createPartnerClient", ({ params, payload }) => Effect.flatMap(adminCall, (by) => createPartnerClient(params.tenantId, payload, by)))
    .handle("listPartnerClients", ({ params }) => listPartnerClients(params.tenantId))
    .handle("rotatePartnerSecret", ({ params, payload }) =>
      Effect.flatMap(adminCall, (by) => rotatePartnerSecret(params.clientId, payload.graceSeconds, by)))
    .handle("disablePartnerClient", ({ params }) => Effect.flatMap(adminCall, (by) => setPartnerClientEnabled(params.clientId, false, by)))
    .handle("enablePartnerClient", ({ params }) => Effect.flatMap(adminCall, (by) => setPartnerClientEnabled(params.clientId, true, by)))
    .handle("createScimToken", ({ params, payload }) => Effect.flatMap(adminCall, (by) => createScimToken(params.tenantId, payload, by)))
    .handle("listScimTokens", ({ params }) => listScimTokens(params.tenantId))
    .handle("revokeScimToken", ({ params }) => Effect.flatMap(adminCall, (by) => revokeScimToken(params.tenantId, params.id, by)))
    .handle("listGatewaySecurityEvents", ({ params, query }) => listSecurityEvents(params.tenantId, query)))
