import { Headers, HttpApi, HttpApiBuilder, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Clock, Config, ConfigError, Effect, Either, Layer, Logger, LogLevel } from "effect"
import { AssertionHeader } from "../security/InternalAssertion.js"
import { Metrics, MetricsLive, PrometheusContentType } from "../telemetry/Metrics.js"
import { httpLimitsConfig, LimitedServer } from "./NodeServer.js"
import { DefaultPorts, type ServiceName } from "../config/Ports.js"
import { ErrorsUrl, ProblemMiddlewareLive } from "./ProblemResponse.js"
import { guardRequests, routerConfigLayer } from "./RequestGuards.js"
import { makeRequestObserver, observeRequests } from "./RequestObservation.js"
import { type ApiRoute, routeTable, type RouteTable, spanNameOf } from "./RouteTable.js"
import { TelemetryLive, withTraceIds } from "../telemetry/Telemetry.js"

export * from "./NodeServer.js"

/** How long one readiness check answers `/readyz`: a flood of probes costs at most one check of the dependencies per period. */
const ReadinessTtlMs = 1_000

/**
 * `ready`, run at most once per `ReadinessTtlMs` however many ask: callers that arrive while a
 * check runs wait for its outcome rather than starting their own.
 */
const cachedReadiness = <R>(ready: Effect.Effect<unknown, unknown, R>) => {
  const lock = Effect.unsafeMakeSemaphore(1)
  let last: { readonly atMs: number; readonly ready: boolean } | undefined
  const known = (nowMs: number) => (last !== undefined && nowMs - last.atMs < ReadinessTtlMs ? last.ready : undefined)
  const check = ready.pipe(
    Effect.timeout("2 seconds"),
    Effect.as(true),
    Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("not ready", cause), false)),
    Effect.tap((outcome) => Effect.map(Clock.currentTimeMillis, (atMs) => void (last = { atMs, ready: outcome })))
  )
  const fresh = Effect.map(Clock.currentTimeMillis, known)
  return Effect.flatMap(fresh, (outcome) =>
    outcome !== undefined
      ? Effect.succeed(outcome)
      : lock.withPermits(1)(Effect.flatMap(fresh, (again) => (again !== undefined ? Effect.succeed(again) : check))))
}

/**
 * `/healthz` answers as long as the process serves; `/readyz` only when `ready` succeeds (the
 * service's dependencies are reachable), checked at most once a second. Both sit outside the API
 * so that no auth applies; the gateway serves them on its admin port only. `detail`, read from
 * memory on every probe, adds what an SRE should see without failing readiness (the gateway's
 * rate limiter counting alone, say).
 */
export const probes = <R, RD = never>(
  ready: Effect.Effect<unknown, unknown, R>,
  detail: Effect.Effect<Record<string, unknown>, never, RD> = Effect.succeed({})
) => {
  const readiness = cachedReadiness(ready)
  return HttpMiddleware.make((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (request.url === "/healthz") return HttpServerResponse.unsafeJson({ status: "ok" })
      if (request.url === "/readyz") {
        const more = yield* detail
        return (yield* readiness)
          ? HttpServerResponse.unsafeJson({ status: "ready", ...more })
          : HttpServerResponse.unsafeJson({ status: "unavailable", ...more }, { status: 503, headers: { "retry-after": "1" } })
      }
      return yield* app
    })
  )
}

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

/** An Effect HTTP server on one of a service's ports, with the platform's limits (`NodeServer.ts`). */
export const listenOn = (service: ServiceName, server: "api" | "admin") =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const listen = yield* listenSettings(service, server)
      const limits = yield* httpLimitsConfig
      const errorsUrl = yield* ErrorsUrl
      return NodeHttpServer.layer(() => new LimitedServer(limits, errorsUrl), listen)
    })
  )

/** A request target's path, without the query string. */
const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/** The route of a request on `table`. */
const routeOf = (table: RouteTable, request: HttpServerRequest.HttpServerRequest): ApiRoute | undefined =>
  table.match(request.method, pathOf(request.url))

/**
 * Low-cardinality server span names, `{METHOD} {route}` with the route as the API declares it
 * (`/api/v1/referentiel/applications/{code}`), for the endpoints of `api`. Effect names the span
 * before routing, so the route is matched here, on the same table as the gateway's.
 */
export const routeSpanNames = (api: HttpApi.HttpApi.Any) => {
  const tables = [routeTable(api)]
  return (request: HttpServerRequest.HttpServerRequest): string => spanNameOf(request.method, routeOfAny(tables, request))
}

const routeOfAny = (tables: ReadonlyArray<RouteTable>, request: HttpServerRequest.HttpServerRequest): ApiRoute | undefined => {
  for (const table of tables) {
    const route = routeOf(table, request)
    if (route !== undefined) return route
  }
  return undefined
}

/**
 * `/metrics`, the Prometheus exposition of the service's metrics (docs/observability.md): on the
 * admin ports only, beside the probes, so that no public port reveals a service's traffic.
 */
const metricsEndpoint = HttpMiddleware.make((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    request.url === "/metrics"
      ? Effect.map(Effect.flatMap(Metrics, (metrics) => metrics.exposition), (body) => HttpServerResponse.text(body, { contentType: PrometheusContentType }))
      : app)
)

/** What a port answers besides its API, which neither traces nor request records should drown in. */
const isInfrastructure = (url: string) => url === "/healthz" || url === "/readyz" || url === "/metrics"

/** Header values a server span must not carry: the gateway's signed assertion is a credential. */
const RedactAssertion = Layer.scopedDiscard(Effect.locallyScopedWith(Headers.currentRedactedNames, (names) => [...names, AssertionHeader]))

/**
 * Serves an HttpApi (its groups already provided in `apiLayer`) on one port, with problem+json
 * errors, the probes, and each request's record (RequestObservation.ts: its duration in the
 * metrics, its line at Info); the admin port also serves `/metrics`. Server spans are named by
 * route; the probes and `/metrics` make none and are not recorded (they would drown the rest).
 * Paths matching `untraced` make no span either: a path carrying a secret (a magic-link token)
 * would otherwise be exported as `url.path`.
 */
export const serveApi = <E, R, ER, ED = never>(options: {
  readonly apiLayer: Layer.Layer<HttpApi.Api, E, R>
  readonly ready: Effect.Effect<unknown, unknown, ER>
  /** More of `/readyz`'s answer, read on every probe (see `probes`). */
  readonly readyDetail?: Effect.Effect<Record<string, unknown>, never, ED>
  readonly service: ServiceName
  readonly server: "api" | "admin"
  readonly untraced?: (path: string) => boolean
  /** The route template of a path served outside the HttpApi (provisioning's acceptance page), for the requests' record. */
  readonly routeOutsideApi?: (path: string) => string | undefined
  /**
   * Contract routes this port serves with its own router rather than the HttpApi (provisioning's
   * SCIM routes, whose media type HttpApi cannot decode): their spans and records are named as the
   * HttpApi's are.
   */
  readonly servedOutsideApi?: HttpApi.HttpApi.Any
}) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const { api } = yield* HttpApi.Api
      const tables = [api, ...(options.servedOutsideApi === undefined ? [] : [options.servedOutsideApi])].map((each) => routeTable(each))
      const guard = guardRequests(api)
      const observe = observeRequests(
        yield* makeRequestObserver,
        (request) => routeOfAny(tables, request)?.template ?? options.routeOutsideApi?.(pathOf(request.url))
      )
      const readiness = probes(options.ready, options.readyDetail)
      return HttpApiBuilder.serve((app) => {
        const observed = observe(guard(app))
        return readiness(options.server === "admin" ? metricsEndpoint(observed) : observed)
      }).pipe(
        HttpMiddleware.withSpanNameGenerator((request) => spanNameOf(request.method, routeOfAny(tables, request))),
        HttpMiddleware.withTracerDisabledWhen((request) => isInfrastructure(request.url) || (options.untraced?.(request.url) ?? false))
      )
    })
  ).pipe(
    Layer.provide(RedactAssertion),
    Layer.provide(routerConfigLayer),
    Layer.provide(ProblemMiddlewareLive),
    Layer.provide(options.apiLayer),
    Layer.provide(listenOn(options.service, options.server))
  )

/**
 * A log level, in any case, by Effect's label (`WARN`, `OFF`) or its name (`Warning`, `None`): the
 * chart and docs/observability.md offer both spellings, and a service must not refuse to start on
 * the one it did not expect.
 */
export const logLevelConfig = (name: string): Config.Config<LogLevel.LogLevel> =>
  Config.string(name).pipe(
    Config.mapOrFail((value) => {
      const wanted = value.trim().toUpperCase()
      const level = LogLevel.allLevels.find((level) => level.label === wanted || level._tag.toUpperCase() === wanted)
      return level === undefined
        ? Either.left(ConfigError.InvalidData([], `Expected one of ${LogLevel.allLevels.map((level) => `${level._tag} (${level.label})`).join(", ")}, in any case, but received ${JSON.stringify(value)}`))
        : Either.right(level)
    })
  )

/**
 * Structured JSON logs (`LOG_FORMAT=pretty` for humans), at `LOG_LEVEL` (default Info); a line
 * written inside a span carries its `traceId` and `spanId`.
 */
export const LoggingLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const format = yield* Config.literal("json", "pretty", "logfmt")("LOG_FORMAT").pipe(Config.withDefault("json" as const))
    const level = yield* logLevelConfig("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
    const logger = format === "pretty" ? Logger.prettyLoggerDefault : format === "logfmt" ? Logger.withConsoleLog(Logger.logfmtLogger) : Logger.withConsoleLog(Logger.jsonLogger)
    return Layer.merge(Logger.replace(Logger.defaultLogger, withTraceIds(logger)), Logger.minimumLogLevel(level))
  })
)

/**
 * Runs a service: the shared infrastructure is built once, then each server layer (the API
 * port, the admin port) is launched on it with its own router. SIGTERM and SIGINT interrupt the
 * whole tree, which closes the listeners, lets in-flight requests finish and closes the pools;
 * the metrics and telemetry layers are released last, so the spans and measures of those last
 * requests are exported too.
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
    Effect.provide(MetricsLive(name)),
    Effect.provide(TelemetryLive(name)),
    Effect.provide(LoggingLive),
    NodeRuntime.runMain({ disablePrettyLogger: true })
  )
