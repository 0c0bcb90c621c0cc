import { HttpApi } from "@effect/platform"
import { RequiredRole, RequiredScope, type Scope, Upstream, type UpstreamName } from "@portfolio/domain"
import { Context, Option } from "effect"

type Segment = { readonly literal: string } | { readonly param: string }

/** One public endpoint as the gateway routes it. */
export interface Route {
  readonly operationId: string
  readonly method: string
  /** Full path pattern with the /api/v1 prefix, parameters as `:name`. */
  readonly pattern: string
  readonly segments: ReadonlyArray<Segment>
  readonly scope: Scope
  readonly requiredRole: Option.Option<"tenant-admin">
  readonly upstream: UpstreamName
}

export type RouteTable = ReadonlyArray<Route>

const toSegments = (pattern: string): ReadonlyArray<Segment> =>
  pattern.split("/").slice(1).map((part) => (part.startsWith(":") ? { param: part.slice(1) } : { literal: part }))

/**
 * The allow-list of the gateway, read from the public contract's groups and endpoints. An endpoint
 * without a scope or a group without an upstream is a contract bug: start-up fails on it rather
 * than exposing the endpoint unguarded.
 */
export const routeTableFrom = (api: HttpApi.HttpApi.Any): RouteTable => {
  const routes: Array<Route> = []
  HttpApi.reflect(api as HttpApi.HttpApi<string, never, never, never>, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      const operationId = `${group.identifier}.${endpoint.name}`
      const scope = Context.getOption(mergedAnnotations, RequiredScope)
      const upstream = Context.getOption(mergedAnnotations, Upstream)
      if (Option.isNone(scope)) throw new Error(`public endpoint ${operationId} has no RequiredScope annotation`)
      if (Option.isNone(upstream)) throw new Error(`public endpoint ${operationId} has no Upstream annotation`)
      routes.push({
        operationId,
        method: endpoint.method,
        pattern: endpoint.path,
        segments: toSegments(endpoint.path),
        scope: scope.value,
        requiredRole: Context.getOption(mergedAnnotations, RequiredRole),
        upstream: upstream.value
      })
    }
  })
  return routes
}

/** Literal segments outrank parameters, position by position (`/functions/search` beats `/functions/:id`). */
const specificity = (route: Route): string => route.segments.map((s) => ("literal" in s ? "1" : "0")).join("")

const matches = (route: Route, parts: ReadonlyArray<string>): boolean =>
  route.segments.length === parts.length &&
  route.segments.every((segment, i) => {
    const part = parts[i]!
    return "literal" in segment ? segment.literal === part : part.length > 0
  })

/** The route of a method and a normalised path (no query string), if it is public. */
export const matchRoute = (table: RouteTable, method: string, path: string): Option.Option<Route> => {
  const parts = path.split("/").slice(1)
  let best: Route | undefined
  for (const route of table) {
    if (route.method !== method || !matches(route, parts)) continue
    if (best === undefined || specificity(route) > specificity(best)) best = route
  }
  return Option.fromNullable(best)
}
