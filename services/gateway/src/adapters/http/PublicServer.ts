import { HttpMiddleware, HttpServer, type HttpServerRequest } from "@effect/platform"
import { PublicApi } from "@portfolio/domain"
import { listenOn, probes } from "@portfolio/platform"
import { Effect, Layer, Option } from "effect"
import { matchRoute, routeTableFrom } from "../../core/RouteTable.js"
import { makePublicApp } from "./PublicApp.js"

const routes = routeTableFrom(PublicApi)

/** Low-cardinality span names (`GET /api/v1/referentiel/applications/:code`), so per-endpoint metrics group well. */
const spanName = (request: HttpServerRequest.HttpServerRequest) => {
  const path = new URL(request.url, "http://gateway.invalid").pathname
  return Option.match(matchRoute(routes, request.method, path), {
    onNone: () => `${request.method} (not routed)`,
    onSome: (route) => `${route.method} ${route.pattern}`
  })
}

/** The public proxy on PORT, with the probes beside it. */
export const publicServer = <E, R>(ready: Effect.Effect<unknown, E, R>) =>
  Layer.unwrapScoped(Effect.map(makePublicApp, (app) => HttpServer.serve(app, probes(ready)))).pipe(
    HttpMiddleware.withSpanNameGenerator(spanName),
    Layer.provide(listenOn("PORT", 8080))
  )
