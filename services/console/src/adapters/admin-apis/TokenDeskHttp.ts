import { GatewayAdminApi } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { type Actor, RequestsPageSize, TokenDesk } from "../../ports/TokenDesk.js"
import { asMemberOutcome, memberClients, asOutage } from "./Upstream.js"

/** The cursor of `Link: <...?cursor=...>; rel="next"` (docs/product-rules.md#lists), or null on the last page. */
export const nextCursor = (link: string | undefined): string | null => {
  const target = link === undefined ? undefined : /^<([^>]*)>;\s*rel="next"$/.exec(link)?.[1]
  if (target === undefined) return null
  return new URLSearchParams(target.slice(target.indexOf("?") + 1)).get("cursor")
}

/** PAT requests and tokens through the gateway's admin API, each call signed for the member. */
export const TokenDeskHttp = Layer.effect(
  TokenDesk,
  Effect.gen(function*() {
    const { gatewayAdminUrl } = yield* ConsoleSettings
    const clients = yield* memberClients(GatewayAdminApi, gatewayAdminUrl)
    const gateway = (actor: Actor) => Effect.map(clients(actor.email), (client) => client.gatewayAdmin)
    const approver = (actor: Actor) => ({ tenantId: actor.tenantId, userSub: actor.userSub, email: actor.email, role: actor.role })
    return TokenDesk.of({
      file: (actor, request) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) =>
          g.filePatRequest({
            payload: {
              tenantId: actor.tenantId,
              userSub: actor.userSub,
              email: actor.email,
              role: actor.role,
              scope: request.scope,
              days: request.days,
              justification: request.justification
            }
          }))),
      requests: (actor, filter, cursor) =>
        Effect.suspend(() => {
          let link: string | undefined
          const listed = Effect.flatMap(clients(actor.email, (response) => (link = response.headers["link"])), (client) =>
            client.gatewayAdmin.listPatRequests({
              urlParams: { tenantId: actor.tenantId, ...filter, limit: RequestsPageSize, ...(cursor === undefined ? {} : { cursor }) }
            }))
          // A cursor the member edited is the gateway's 400: theirs to read, not an outage.
          return asMemberOutcome(Effect.map(listed, (items) => ({ items, next: nextCursor(link) })))
        }),
      approve: (actor, requestId) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) => g.approvePatRequest({ path: { id: requestId }, payload: { approver: approver(actor) } }))),
      deny: (actor, requestId, reason) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) => g.denyPatRequest({ path: { id: requestId }, payload: { approver: approver(actor), reason } }))),
      tokens: (actor) => asOutage(Effect.flatMap(gateway(actor), (g) => g.listPats({ urlParams: { tenantId: actor.tenantId, userSub: actor.userSub } }))),
      revoke: (actor, patId) =>
        asMemberOutcome(Effect.flatMap(gateway(actor), (g) =>
          g.revokePat({ payload: { tokenOrId: patId, holder: { tenantId: actor.tenantId, userSub: actor.userSub } } })))
    })
  })
)
