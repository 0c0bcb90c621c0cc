import { Headers, HttpApi, HttpApiBuilder, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Exit, Layer, Logger, LogLevel } from "effect"
import { createServer } from "node:http"
import { AssertionHeader } from "./InternalAssertion.js"
import { DefaultPorts, type ServiceName } from "./Ports.js"
import { ProblemMiddlewareLive } from "./ProblemResponse.js"
import { routeTable, spanNameOf } from "./RouteTable.js"
import { TelemetryLive, withTraceIds } from "./Telemetry.js"

/**
 * `/healthz` answers as long as the process serves; `/readyz` only when `ready` succeeds (the
 * service's dependencies are reachable). Both sit outside the API so that no auth applies.
 */
export const probes = <R>(ready: Effect.Effect<unknown, unknown, R>) =>
  HttpMiddleware.make((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (request.url === "/healthz") return HttpServerResponse.unsafeJson({ status: "ok" })
      if (request.url === "/readyz") {
        return yield* ready.pipe(
          Effect.timeout("2 seconds"),
          Effect.as(HttpServerResponse.unsafeJson({ status: "ready" })),
          Effect.catchAllCause((cause) =>
            Effect.as(
              Effect.logWarning("not ready", cause),
              HttpServerResponse.unsafeJson({ status: "unavailable" }, { status: 503, headers: { "retry-after": "1" } })
            )
          )
        )
      }
      return yield* app
    })
  )

export interface ListenSettings {
  readonly port: number
  readonly host: string
}

/** Where one of a service's servers listens: `PORT` or `ADMIN_PORT`, on `HOST` (default all interfaces). */
export const listenSettings = (service: ServiceName, server: "api" | "admin"): Config.Config<ListenSettings> =>
  Config.all({
    port: Config.port(server === "api" ? "PORT" : "ADMIN_PORT").pipe(Config.withDefault(DefaultPorts[service][server])),
    host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0"))
  })

export const listenOn = (service: ServiceName, server: "api" | "admin") =>
  NodeHttpServer.layerConfig(createServer, listenSettings(service, server))

/**
 * Low-cardinality server span names, `{METHOD} {route}` with the route as the API declares it
 * (`/api/v1/referentiel/applications/{code}`), for the endpoints of `api`. Effect names the span
 * before routing, so the route is matched here, on the same table as the gateway's.
 */
export const routeSpanNames = (api: HttpApi.HttpApi.Any) => {
  const table = routeTable(api)
  return (request: HttpServerRequest.HttpServerRequest): string => {
    const query = request.url.indexOf("?")
    return spanNameOf(request.method, table.match(request.method, query === -1 ? request.url : request.url.slice(0, query)))
  }
}

/**
 * One Debug line per answered request, inside its span (so with its trace id): the route name
 * rather than the URL, which may carry what logs must not (a magic-link token, search terms).
 */
const accessLog = (routeName: (request: HttpServerRequest.HttpServerRequest) => string) =>
  HttpMiddleware.make((app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.onExit(app, (exit) =>
        Effect.logDebug(Exit.isSuccess(exit) ? "request answered" : "request failed").pipe(
          Effect.annotateLogs({
            "http.route": routeName(request),
            ...(Exit.isSuccess(exit) ? { "http.response.status_code": exit.value.status } : {})
          })
        )))
  )

/** Header values a server span must not carry: the gateway's signed assertion is a credential. */
const RedactAssertion = Layer.scopedDiscard(Effect.locallyScopedWith(Headers.currentRedactedNames, (names) => [...names, AssertionHeader]))

/**
 * Serves an HttpApi (its groups already provided in `apiLayer`) on one port, with problem+json
 * errors, the probes and a Debug access line per request. Server spans are named by route; the probes make none (they would
 * drown the traces). Paths matching `untraced` make none either: a path carrying a secret (a
 * magic-link token) would otherwise be exported as `url.path`.
 */
export const serveApi = <E, R, ER>(options: {
  readonly apiLayer: Layer.Layer<HttpApi.Api, E, R>
  readonly ready: Effect.Effect<unknown, unknown, ER>
  readonly service: ServiceName
  readonly server: "api" | "admin"
  readonly untraced?: (path: string) => boolean
}) =>
  Layer.unwrapEffect(
    Effect.map(HttpApi.Api, ({ api }) => {
      const routeName = routeSpanNames(api)
      return HttpApiBuilder.serve((app) => probes(options.ready)(accessLog(routeName)(app))).pipe(
        HttpMiddleware.withSpanNameGenerator(routeName),
        HttpMiddleware.withTracerDisabledWhen((request) =>
          request.url === "/healthz" || request.url === "/readyz" || (options.untraced?.(request.url) ?? false)
        )
      )
    })
  ).pipe(
    Layer.provide(RedactAssertion),
    Layer.provide(ProblemMiddlewareLive),
    Layer.provide(options.apiLayer),
    Layer.provide(listenOn(options.service, options.server))
  )

/**
 * Structured JSON logs (`LOG_FORMAT=pretty` for humans), at `LOG_LEVEL` (default Info); a line
 * written inside a span carries its `traceId` and `spanId`.
 */
export const LoggingLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const format = yield* Config.literal("json", "pretty", "logfmt")("LOG_FORMAT").pipe(Config.withDefault("json" as const))
    const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    const logger = format === "pretty" ? Logger.prettyLoggerDefault : format === "logfmt" ? Logger.withConsoleLog(Logger.logfmtLogger) : Logger.withConsoleLog(Logger.jsonLogger)
    return Layer.merge(Logger.replace(Logger.defaultLogger, withTraceIds(logger)), Logger.minimumLogLevel(level))
  })
)

/**
 * Runs a service: the shared infrastructure is built once, then each server layer (the API
 * port, the admin port) is launched on it with its own router. SIGTERM and SIGINT interrupt the
 * whole tree, which closes the listeners, lets in-flight requests finish and closes the pools;
 * the telemetry layer is released last, so the spans of those last requests are flushed too.
 */
export const runService = <ROut, E>(
  name: string,
  infra: Layer.Layer<ROut, E>,
  servers: ReadonlyArray<Layer.Layer<never, unknown, ROut>>
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(infra)
    yield* Effect.logInfo("service started")
    yield* Effect.all(
      servers.map((server) => Layer.launch(Layer.provide(server, Layer.succeedContext(context)))),
      { concurrency: "unbounded", discard: true }
    )
  }).pipe(
    Effect.scoped,
    Effect.annotateLogs("service", name),
    Effect.provide(TelemetryLive(name)),
    Effect.provide(LoggingLive),
    NodeRuntime.runMain({ disablePrettyLogger: true })
  )
