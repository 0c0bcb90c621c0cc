import { HttpApiBuilder, HttpMiddleware, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer, Logger, LogLevel } from "effect"
import { createServer } from "node:http"
import { ProblemMiddlewareLive } from "./ProblemResponse.js"
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

export const listenOn = (portVariable: string, defaultPort: number) =>
  NodeHttpServer.layerConfig(createServer, {
    port: Config.port(portVariable).pipe(Config.withDefault(defaultPort)),
    host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0"))
  })

/**
 * Serves an HttpApi (its groups already provided in `apiLayer`) on one port, with problem+json
 * errors and the probes.
 */
export const serveApi = <E, R, ER>(options: {
  readonly apiLayer: Layer.Layer<import("@effect/platform").HttpApi.Api, E, R>
  readonly ready: Effect.Effect<unknown, unknown, ER>
  readonly portVariable: string
  readonly defaultPort: number
}) =>
  HttpApiBuilder.serve(probes(options.ready)).pipe(
    Layer.provide(ProblemMiddlewareLive),
    Layer.provide(options.apiLayer),
    Layer.provide(listenOn(options.portVariable, options.defaultPort))
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
