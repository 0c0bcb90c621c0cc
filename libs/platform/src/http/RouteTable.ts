import { HttpApi } from "effect/http-api"
import type { Context } from "effect"

/** One endpoint of an HttpApi, as routers and traces name it. */
export interface ApiRoute {
  /** `<group>.<endpoint>`. */
  readonly operationId: string
  readonly method: string
  /** The path as the API declares it, parameters as `:name` (`/api/v1/referentiel/applications/:code`). */
  readonly path: string
  /** OpenTelemetry's `http.route`, parameters as `{name}` (`/api/v1/referentiel/applications/{code}`). */
  readonly template: string
  /** `{METHOD} {template}`: the low-cardinality name of a request's server span. */
  readonly name: string
}

/** What the reflection of an endpoint offers to whoever adds fields of their own to its route. */
export interface ReflectedEndpoint {
  readonly operationId: string
  /** The endpoint's annotations merged over its group's and the API's. */
  readonly annotations: Context.Context<never>
}

export interface RouteTable<R extends ApiRoute = ApiRoute> {
  readonly routes: ReadonlyArray<R>
  /**
   * The route of a method and a path without query string, `undefined` when none matches. A
   * parameter matches one non-empty segment; where several routes match, literal segments outrank
   * parameters position by position (`/functions/search` beats `/functions/:id`), as in the router.
   * HEAD matches the GET route of its path where no HEAD route is declared.
   */
  readonly match: (method: string, path: string) => R | undefined
}

interface Compiled<R> {
  readonly route: R
  /** The declared path split on `/`; `undefined` stands for a parameter. */
  readonly segments: ReadonlyArray<string | undefined>
  /** One digit per segment, 1 literal, 0 parameter: the greater string is the more specific route. */
  readonly rank: string
}

const compile = <R extends ApiRoute>(route: R): Compiled<R> => {
  const segments = route.path.split("/").map((part) => (part.startsWith(":") ? undefined : part))
  return { route, segments, rank: segments.map((s) => (s === undefined ? "0" : "1")).join("") }
}

const matches = (segments: ReadonlyArray<string | undefined>, parts: ReadonlyArray<string>): boolean => {
  if (segments.length !== parts.length) return false
  for (let i = 0; i < parts.length; i++) {
    const segment = segments[i]
    if (segment === undefined ? parts[i]!.length === 0 : segment !== parts[i]) return false
  }
  return true
}

/**
 * The routes of `api`, each extended with what `extend` says of its endpoint (the gateway adds
 * scope, role and upstream). Built once at start-up: a match per request is then one split of the
 * path and a scan of that method's routes, most specific first.
 */
export function routeTable(api: HttpApi.Constraint): RouteTable
export function routeTable<A>(api: HttpApi.Constraint, extend: (endpoint: ReflectedEndpoint) => A): RouteTable<ApiRoute & A>
export function routeTable<A>(api: HttpApi.Constraint, extend?: (endpoint: ReflectedEndpoint) => A): RouteTable<ApiRoute & A> {
  const routes: Array<ApiRoute & A> = []
  HttpApi.reflect(api as HttpApi.Top, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      const operationId = `${group.identifier}.${endpoint.identifier}`
      const template = endpoint.path.replace(/:(\w+)/g, "{$1}")
      const own = extend?.({ operationId, annotations: mergedAnnotations }) ?? ({} as A)
      routes.push({ ...own, operationId, method: endpoint.method, path: endpoint.path, template, name: `${endpoint.method} ${template}` })
    }
  })
  const byMethod = new Map<string, Array<Compiled<ApiRoute & A>>>()
  for (const route of routes) {
    const compiled = byMethod.get(route.method) ?? []
    compiled.push(compile(route))
    byMethod.set(route.method, compiled)
  }
  // Most specific first (a stable sort: equally specific routes keep the API's order), so that the first match wins.
  for (const compiled of byMethod.values()) compiled.sort((a, b) => (a.rank < b.rank ? 1 : a.rank > b.rank ? -1 : 0))
  return {
    routes,
    match: (method, path) => {
      const parts = path.split("/")
      const find = (candidates: ReadonlyArray<Compiled<ApiRoute & A>> | undefined) => candidates?.find((candidate) => matches(candidate.segments, parts))?.route
      // HEAD is GET without the body (RFC 9110, 9.3.2): a path's HEAD is its GET route, as the routers answer it.
      return find(byMethod.get(method)) ?? (method === "HEAD" ? find(byMethod.get("GET")) : undefined)
    }
  }
}

/** The server span name of a request: its route's, or `{METHOD} unmatched`, so that probing random paths cannot multiply span names. */
export const spanNameOf = (method: string, route: ApiRoute | undefined): string => route === undefined ? `${method} unmatched` : route.name
