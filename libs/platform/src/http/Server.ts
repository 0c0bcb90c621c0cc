import type { HttpApi } from "effect/http-api"
import { Headers, HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Clock, Config, Effect, Exit, Layer, Logger, type LogLevel, References, Result, Semaphore, type Types } from "effect"
import { AssertionHeader } from "../security/InternalAssertion.js"
import { Metrics, MetricsLive, PrometheusContentType } from "../telemetry/Metrics.js"
import { observeRuntime } from "../telemetry/RuntimeMetrics.js"
import { httpLimitsConfig, LimitedServer } from "./NodeServer.js"
import { DefaultPorts, type ServiceName } from "../config/Ports.js"
import { parsedSetting } from "../config/Settings.js"
import { answerProblems, ErrorsUrl, ProblemMiddlewareLive } from "./ProblemResponse.js"
import { guardRequests, RouterConfig } from "./RequestGuards.js"
import { makeRequestObserver, observeRequests } from "./RequestObservation.js"
import { type ApiRoute, routeTable, type RouteTable, spanNameOf } from "./RouteTable.js"
import { TelemetryLive } from "../telemetry/Telemetry.js"
import { jsonLogger, logfmtLogger, prettyLogger, withTraceIds } from "../telemetry/LogFormat.js"

export * from "./NodeServer.js"

/** How long one readiness check answers `/readyz`: a flood of probes costs at most one check of the dependencies per period. */
const ReadinessTtlMs = 1_000

/**
 * `ready`, run at most once per `ReadinessTtlMs` however many ask: callers that arrive while a
 * check runs wait for its outcome rather than starting their own.
 */
const cachedReadiness = <R>(ready: Effect.Effect<unknown, unknown, R>) => {
  const lock = Semaphore.makeUnsafe(1)
  let last: { readonly atMs: number; readonly ready: boolean } | undefined
  const known = (nowMs: number) => (last !== undefined && nowMs - last.atMs < ReadinessTtlMs ? last.ready : undefined)
  const check = ready.pipe(
    Effect.timeout("2 seconds"),
    Effect.as(true),
    Effect.catchCause((cause) => Effect.as(Effect.logWarning("not ready", cause), false)),
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
      if (request.url === "/healthz") return HttpServerResponse.jsonUnsafe({ status: "ok" })
      if (request.url === "/readyz") {
        const more = yield* detail
        return (yield* readiness)
          ? HttpServerResponse.jsonUnsafe({ status: "ready", ...more })
          : HttpServerResponse.jsonUnsafe({ status: "unavailable", ...more }, { status: 503, headers: { "retry-after": "1" } })
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
    port: Config.Port(server === "api" ? "PORT" : "ADMIN_PORT").pipe(Config.withDefault<number>(DefaultPorts[service][server])),
    host: Config.String("HOST").pipe(Config.withDefault("0.0.0.0"))
  })

/** An Effect HTTP server on one of a service's ports, with the platform's limits (`NodeServer.ts`). */
export const listenOn = (service: ServiceName, server: "api" | "admin") =>
  Layer.unwrap(
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
export const routeSpanNames = (api: HttpApi.Constraint) => {
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
const RedactAssertion = Layer.unwrap(
  Effect.map(Headers.CurrentRedactedNames, (names) => Layer.succeed(Headers.CurrentRedactedNames, [...names, AssertionHeader]))
)

/**
 * `wrap` around a whole router, the routing included: what it answers reaches the client as it
 * leaves it (Effect 4 sends a response before a server-wide middleware sees it). `app` fails with
 * whatever the router did not answer; so may `wrap`, with what it leaves unanswered.
 */
export const aroundRouter = <R>(
  wrap: (app: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>) => Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, R>
) => Layer.effectDiscard(Effect.flatMap(HttpRouter.HttpRouter, (router) => router.addGlobalMiddleware(wrap)))

/**
 * Serves an HttpApi on one port, with problem+json errors, the probes, and each request's record
 * (RequestObservation.ts: its duration in the metrics, its line at Info); the admin port also
 * serves `/metrics`. `apiLayer` registers the API's routes (`HttpApiBuilder.layer(api)` with its
 * groups provided, and any routes of its own) and `api` is the contract it serves. Server spans
 * are named by route; the probes and `/metrics` make none and are not recorded (they would drown
 * the rest). Paths matching `untraced` make no span either: a path carrying a secret (a
 * magic-link token) would otherwise be exported as `url.path`.
 */
export const serveApi = <E, R, ER, ED = never>(options: {
  readonly api: HttpApi.Constraint
  readonly apiLayer: Layer.Layer<never, E, R>
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
  readonly servedOutsideApi?: HttpApi.Constraint
}) => {
  const tables = [options.api, ...(options.servedOutsideApi === undefined ? [] : [options.servedOutsideApi])].map((each) => routeTable(each))
  // Around the whole router, as Effect 3's `HttpApiBuilder.serve` middleware was: what it answers
  // (an unknown route, a refused request, a probe) reaches the client as it leaves here.
  const platformMiddleware = Layer.unwrap(
    Effect.gen(function*() {
      const guard = guardRequests(options.api)
      const observe = observeRequests(
        yield* makeRequestObserver,
        (request) => routeOfAny(tables, request)?.template ?? options.routeOutsideApi?.(pathOf(request.url))
      )
      const readiness = probes(options.ready, options.readyDetail)
      return aroundRouter((app) => {
        const observed = observe(guard(answerProblems(app)))
        return readiness(options.server === "admin" ? metricsEndpoint(observed) : observed)
      })
    })
  )
  return HttpRouter.serve(Layer.mergeAll(Layer.provide(options.apiLayer, ProblemMiddlewareLive), platformMiddleware), {
    routerConfig: RouterConfig,
    // Each request's line is RequestObservation's; Effect 3's server logged neither requests nor its address.
    disableLogger: true,
    disableListenLog: true
  }).pipe(
    Layer.provide(Layer.succeed(HttpMiddleware.SpanNameGenerator, (request) => spanNameOf(request.method, routeOfAny(tables, request)))),
    Layer.provide(
      Layer.succeed(HttpMiddleware.TracerDisabledWhen, (request) => isInfrastructure(request.url) || (options.untraced?.(request.url) ?? false))
    ),
    Layer.provide(RedactAssertion),
    Layer.provide(listenOn(options.service, options.server))
  )
}

/**
 * A log level, in any case, by Effect's label (`WARN`, `OFF`) or its name (`Warning`, `None`): the
 * chart and docs/observability.md offer both spellings, and a service must not refuse to start on
 * the one it did not expect.
 */
export const logLevelConfig = (name: string): Config.Config<LogLevel.LogLevel> =>
  parsedSetting(name, (value) => {
    const wanted = value.trim().toUpperCase()
    const level = LogLevels.find((level) => level.label === wanted || level.name.toUpperCase() === wanted)
    return level === undefined
      ? Result.fail(`Expected one of ${LogLevels.map((level) => `${level.name} (${level.label})`).join(", ")}, in any case, but received ${JSON.stringify(value)}`)
      : Result.succeed(level.level)
  })

/**
 * The levels by the names and labels Effect 3 gave them, which `LOG_LEVEL` takes, and the level
 * each is in Effect 4 (which names `Warning` `Warn` and has no labels).
 */
const LogLevels: ReadonlyArray<{ readonly name: string; readonly label: string; readonly level: LogLevel.LogLevel }> = [
  { name: "All", label: "ALL", level: "All" },
  { name: "Fatal", label: "FATAL", level: "Fatal" },
  { name: "Error", label: "ERROR", level: "Error" },
  { name: "Warning", label: "WARN", level: "Warn" },
  { name: "Info", label: "INFO", level: "Info" },
  { name: "Debug", label: "DEBUG", level: "Debug" },
  { name: "Trace", label: "TRACE", level: "Trace" },
  { name: "None", label: "OFF", level: "None" }
]

const LogFormats = ["json", "pretty", "logfmt"] as const

/** `LOG_FORMAT`, refused in Effect 3's words (`Config.literal`'s). */
const logFormatConfig = parsedSetting("LOG_FORMAT", (value) =>
  Result.fromNullishOr(LogFormats.find((format) => format === value), () => `Expected one of (${LogFormats.join(", ")}) but received ${JSON.stringify(value)}`))

/**
 * Structured JSON logs (`LOG_FORMAT=pretty` for humans), at `LOG_LEVEL` (default Info); a line
 * written inside a span carries its `traceId` and `spanId`, and is an event of that span too.
 */
export const LoggingLive = Layer.unwrap(
  Effect.gen(function*() {
    const format = yield* logFormatConfig.pipe(Config.withDefault("json" as const))
    const level = yield* logLevelConfig("LOG_LEVEL").pipe(Config.withDefault<LogLevel.LogLevel>("Info"))
    const logger = format === "pretty" ? prettyLogger : Logger.withConsoleLog(format === "logfmt" ? logfmtLogger : jsonLogger)
    return Layer.merge(Logger.layer([withTraceIds(logger), Logger.tracerLogger]), Layer.succeed(References.MinimumLogLevel, level))
  })
)

/**
 * A failure that stops a service (a refused setting, a port in use) as Effect 3 reported it: one
 * line of its default logger (`timestamp=… level=ERROR fiber=#… cause=…`) on stdout, outside the
 * service's own log format, which may be what failed.
 */
const reportFailure = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.tapCause(effect, (cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.void
      : Effect.logError(cause).pipe(Effect.provide(Logger.layer([Logger.withConsoleLog(Logger.formatSimple)]))))

/** Exit codes as Effect 3 gave them: 0 once stopped by SIGTERM or SIGINT (an interruption), 1 on a failure. */
const teardown = <E, A>(exit: Exit.Exit<E, A>, onExit: (code: number) => void) =>
  onExit(Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) ? 1 : 0)

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
    yield* observeRuntime()
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
    reportFailure,
    NodeRuntime.runMain({ disableErrorReporting: true, teardown })
  )
