import type { HttpApi } from "effect/http-api"
import { ConsoleAdminApi, GatewayAdminApi, ProvisioningAdminApi, PublicApi, ReferentialAdminApi, Upstream, WebhookAdminApi } from "@portfolio/domain"
import { Context, Option } from "effect"
import type { Audience } from "./AssertionToken.js"
import { type ApiRoute, routeTable, type RouteTable } from "../http/RouteTable.js"

/**
 * Which service answers each route of the contracts: the public groups name theirs (`Upstream`,
 * the annotation the gateway forwards by), each admin API belongs to its service. A service's
 * audience is read here from the route its own router matched, so no setting can give two
 * services the same name, and a signer (the CLI) finds the audience of the call it makes.
 */
const tables: ReadonlyArray<RouteTable<ApiRoute & { readonly audience: Audience }>> = [
  routeTable(PublicApi, ({ annotations, operationId }) => {
    const upstream = Context.getOption(annotations, Upstream)
    if (Option.isNone(upstream)) throw new Error(`public endpoint ${operationId} has no Upstream annotation`)
    return { audience: upstream.value }
  }),
  ...([[GatewayAdminApi, "gateway"], [ReferentialAdminApi, "referential"], [ProvisioningAdminApi, "provisioning"], [WebhookAdminApi, "webhook-dispatcher"], [ConsoleAdminApi, "console"]] as const).map(
    ([api, audience]: readonly [HttpApi.Constraint, Audience]) => routeTable(api, () => ({ audience }))
  )
]

const byRoute = new Map<string, Audience>()
for (const table of tables) {
  for (const route of table.routes) {
    const key = `${route.method} ${route.path}`
    const known = byRoute.get(key)
    // Two services declaring one route would make the audience a guess: refuse to start instead.
    if (known !== undefined && known !== route.audience) throw new Error(`${key} is declared by both ${known} and ${route.audience}`)
    byRoute.set(key, route.audience)
  }
}

/** The audience of a route as the router declares it (`/admin/tenants/:slug`), if a contract has it. */
export const audienceOfRoute = (method: string, declaredPath: string): Audience | undefined => byRoute.get(`${method} ${declaredPath}`)

/** The audience of a request path (no query string) to one of the contracts' endpoints, if any. */
export const audienceOfPath = (method: string, path: string): Audience | undefined => {
  for (const table of tables) {
    const route = table.match(method, path)
    if (route !== undefined) return route.audience
  }
  return undefined
}
