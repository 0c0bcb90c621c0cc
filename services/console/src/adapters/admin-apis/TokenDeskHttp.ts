import { ApprovePatRequest, DenyPatRequest, GatewayAdminApi, NewPatRequest, PatRequestApprover, RevokePatRequest } from "@portfolio/domain"
import { cursorOfNextLink } from "@portfolio/platform/http"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { type Actor, RequestsPageSize, TokenDesk } from "../../ports/TokenDesk.js"
import { memberDesk } from "./Upstream.js"

/** PAT requests and tokens through the gateway's admin API, each call signed for the member. */
export const TokenDeskHttp = Layer.effect(
  TokenDesk,
  Effect.gen(function*() {
    const { gatewayAdminUrl } = yield* ConsoleSettings
    const gateway = yield* memberDesk(GatewayAdminApi, gatewayAdminUrl, "gatewayAdmin")
    const approver = (actor: Actor) => new PatRequestApprover({ tenantId: actor.tenantId, userSub: actor.userSub, email: actor.email, role: actor.role })
    return TokenDesk.of({
      file: (actor, request) =>
        gateway.outcome(actor.email, (g) =>
          g.filePatRequest({
            payload: new NewPatRequest({
              tenantId: actor.tenantId,
              userSub: actor.userSub,
              email: actor.email,
              role: actor.role,
              scope: request.scope,
              days: request.days,
              justification: request.justification
            })
          })),
      // The next page's cursor is in the answer's Link header (docs/product-rules.md#lists). A cursor
      // the member edited is the gateway's 400: theirs to read, not an outage.
      requests: (actor, filter, cursor) =>
        gateway.outcome(actor.email, (g) =>
          g.listPatRequests({
            query: { tenantId: actor.tenantId, ...filter, limit: RequestsPageSize, ...(cursor === undefined ? {} : { cursor }) },
            responseMode: "decoded-and-response"
          })).pipe(Effect.map(([items, response]) => ({ items, next: cursorOfNextLink(response.headers["link"]) }))),
      approve: (actor, requestId) =>
        gateway.outcome(actor.email, (g) => g.approvePatRequest({ params: { id: requestId }, payload: new ApprovePatRequest({ approver: approver(actor) }) })),
      deny: (actor, requestId, reason) =>
        gateway.outcome(actor.email, (g) => g.denyPatRequest({ params: { id: requestId }, payload: new DenyPatRequest({ approver: approver(actor), reason }) })),
      tokens: (actor) => gateway.outage(actor.email, (g) => g.listPats({ query: { tenantId: actor.tenantId, userSub: actor.userSub } })),
      revoke: (actor, patId) =>
        gateway.outcome(actor.email, (g) => g.revokePat({ payload: new RevokePatRequest({ tokenOrId: patId, holder: { tenantId: actor.tenantId, userSub: actor.userSub } }) }))
    })
  })
)
