import { RequiredCredential, RequiredRole, RequiredScope, type Scope, ScimApiPrefix, Upstream, type UpstreamName } from "@portfolio/domain"
import { type ApiRoute, type ReflectedEndpoint, routeTable, type RouteTable } from "@portfolio/platform/http"
import { Context, Option } from "effect"

/** One public endpoint as the gateway admits it: its route, and who may call it and where it goes. */
export interface PublicRoute extends ApiRoute {
  readonly scope: Scope
  readonly requiredRole: Option.Option<"tenant-admin">
  /** The only kind of credential the route admits, when it takes one kind only (the SCIM endpoints). */
  readonly credential: Option.Option<"scim">
  readonly upstream: UpstreamName
}

export type AllowList = RouteTable<PublicRoute>

const guardOf = ({ annotations, operationId }: ReflectedEndpoint) => {
  const scope = Context.getOption(annotations, RequiredScope)
  const upstream = Context.getOption(annotations, Upstream)
  if (Option.isNone(scope)) throw new Error(`public endpoint ${operationId} has no RequiredScope annotation`)
  if (Option.isNone(upstream)) throw new Error(`public endpoint ${operationId} has no Upstream annotation`)
  return {
    scope: scope.value,
    requiredRole: Context.getOption(annotations, RequiredRole),
    credential: Context.getOption(annotations, RequiredCredential),
    upstream: upstream.value
  }
}

/**
 * The allow-list of the gateway, read from the public contract's groups and endpoints. An endpoint
 * without a scope or a group without an upstream is a contract bug: start-up fails on it rather
 * than exposing the endpoint unguarded. A HEAD request matches the GET route of its path.
 */
export const allowListOf = (api: Parameters<typeof routeTable>[0]): AllowList => {
  const table = routeTable(api, guardOf)
  return {
    routes: table.routes,
    // HEAD is GET without the body (RFC 9110, 9.3.2): admitted wherever GET is, with GET's scope.
    // The services' routers answer it with their GET route.
    match: table.match
  }
}

/** Where the SCIM endpoints live (docs/scim.md): every answer under it is SCIM's, refusals included. */

export const isScimPath = (path: string): boolean => path === ScimApiPrefix || path.startsWith(`${ScimApiPrefix}/`)

const scimGroupsPath = `${ScimApiPrefix}/Groups`

/**
 * Why a call matches no public endpoint. An identity tool that asks for Groups learns where roles
 * are set instead, since a bare 404 would read as a broken connection.
 */
export const offListDetail = (method: string, path: string): string =>
  path === scimGroupsPath || path.startsWith(`${scimGroupsPath}/`)
    ? "Groups are not supported: roles are set per User, in its 'roles' attribute (see /ResourceTypes)."
    : `${method} ${path} is not an endpoint of the public API.`
