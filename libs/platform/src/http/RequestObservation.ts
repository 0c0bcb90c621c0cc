import { HttpMiddleware, HttpServerRequest } from "effect/http"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type { Attributes, Meter } from "@opentelemetry/api"
import { Context, Effect, LogLevel, Option, References, type Tracer } from "effect"
import type http from "node:http"
import type http2 from "node:http2"
import { Metrics } from "../telemetry/Metrics.js"

/** OpenTelemetry's advised boundaries for `http.server.request.duration`, in seconds. */
export const HttpDurationBuckets: ReadonlyArray<number> = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

/** The methods OpenTelemetry names; any other is `_OTHER`, so that a client cannot mint series. */
const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])

/**
 * `http.server.request.duration`, recorded per method, route template (none when no route
 * matched) and status; a request that got no answer (its client went away first) has
 * `error.type: aborted` instead of a status. The attribute objects are made once per combination
 * and reused: the SDK then only hashes them, a couple of microseconds per request.
 */
const httpServerDuration = (meter: Meter) => {
  const histogram = meter.createHistogram("http.server.request.duration", {
    unit: "s",
    description: "Duration of HTTP server requests, from the request's arrival until its response closed.",
    advice: { explicitBucketBoundaries: [...HttpDurationBuckets] }
  })
  const made = new Map<string, Attributes>()
  const attributesOf = (method: string, route: string | undefined, status: number | undefined): Attributes => {
    const key = `${method} ${route ?? ""} ${status ?? ""}`
    const known = made.get(key)
    if (known !== undefined) return known
    const fresh: Attributes = {
      "http.request.method": method,
      ...(route === undefined ? {} : { "http.route": route }),
      ...(status === undefined ? { "error.type": "aborted" } : { "http.response.status_code": status })
    }
    made.set(key, fresh)
    return fresh
  }
  return (method: string, route: string | undefined, status: number | undefined, seconds: number): void =>
    histogram.record(seconds, attributesOf(knownMethods.has(method) ? method : "_OTHER", route, status))
}

/**
 * What one request's record says beyond its method and status, filled in while it is answered by
 * whoever learns it: the route once matched, the caller once authenticated.
 */
export interface Exchange {
  /** The route template (`/api/v1/referentiel/applications/{code}`), never the path: a path may carry secrets. */
  route: string | undefined
  tenant: string | undefined
  /** The gateway's only: the displayed prefix of the caller's token (10 characters), never more. */
  tokenPrefix: string | undefined
  requestId: string | undefined
  /** The request's server span: its log line carries the span's trace id. */
  span: Tracer.AnySpan | undefined
}

/** The exchange of the request being answered, for what an Effect app learns of it (ServiceAuthentication: the tenant). */
export class CurrentExchange extends Context.Service<CurrentExchange, Exchange>()("@portfolio/platform/CurrentExchange") {}

const requestIdShape = /^[A-Za-z0-9._:-]{1,128}$/

/** A request id as a client or the gateway sent it (`X-Request-Id`), when it is a sane token: anything else could forge log lines. */
export const saneRequestId = (header: string | ReadonlyArray<string> | undefined): string | undefined =>
  typeof header === "string" && requestIdShape.test(header) ? header : undefined

export interface RequestObserver {
  /**
   * Starts the record of one request: when its response closes, its duration is recorded and,
   * at Info, its line is logged, with whatever the returned exchange learnt meanwhile.
   */
  readonly observe: (request: http.IncomingMessage | http2.Http2ServerRequest, response: http.ServerResponse | http2.Http2ServerResponse) => Exchange
}

/** Milliseconds to the microsecond: enough for a duration, and short in a log line. */
const roundedMs = (ms: number) => Math.round(ms * 1000) / 1000

/**
 * The line of each request (docs/observability.md, "Request logs"), or `undefined` when Info is
 * below the service's `LOG_LEVEL`: then nothing at all is built per request. The line is written
 * in the request's span, so it carries the trace id as every other line does (Telemetry.ts).
 */
const requestLog = Effect.gen(function*() {
  if (LogLevel.isLessThan("Info", yield* References.MinimumLogLevel)) return undefined
  const runFork = Effect.runForkWith(yield* Effect.context<never>())
  return (request: http.IncomingMessage | http2.Http2ServerRequest, status: number | undefined, durationMs: number, exchange: Exchange): void => {
    const fields: Record<string, unknown> = { method: request.method }
    if (exchange.route !== undefined) fields["route"] = exchange.route
    if (status !== undefined) fields["status"] = status
    fields["duration_ms"] = roundedMs(durationMs)
    if (exchange.tenant !== undefined) fields["tenant"] = exchange.tenant
    if (exchange.tokenPrefix !== undefined) fields["token_prefix"] = exchange.tokenPrefix
    if (exchange.requestId !== undefined) fields["request_id"] = exchange.requestId
    const line = Effect.annotateLogs(Effect.logInfo("request"), fields)
    runFork(exchange.span === undefined ? line : Effect.withParentSpan(line, exchange.span))
  }
})

/**
 * The record of every request of a port (docs/observability.md): its duration in
 * `http.server.request.duration` and its line at Info, both when its response closes, so that the
 * duration covers the whole answer and the status is the one sent.
 */
export const makeRequestObserver: Effect.Effect<RequestObserver> = Effect.gen(function*() {
  const record = httpServerDuration((yield* Metrics).meter)
  const log = yield* requestLog
  return {
    observe: (request, response) => {
      const startedAt = performance.now()
      const exchange: Exchange = { route: undefined, tenant: undefined, tokenPrefix: undefined, requestId: undefined, span: undefined }
      response.once("close", () => {
        const durationMs = performance.now() - startedAt
        const status = response.headersSent ? response.statusCode : undefined
        record(request.method ?? "GET", exchange.route, status, durationMs / 1000)
        log?.(request, status, durationMs, exchange)
      })
      return exchange
    }
  }
})

/**
 * Observes every request an Effect app answers, its route named by `routeOf` and its request id
 * taken from `X-Request-Id` (the gateway sends it upstream). The app gets the exchange as
 * `CurrentExchange` to add what only it learns.
 */
export const observeRequests = (observer: RequestObserver, routeOf: (request: HttpServerRequest.HttpServerRequest) => string | undefined) =>
  HttpMiddleware.make((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const exchange = observer.observe(NodeHttpServerRequest.toIncomingMessage(request), NodeHttpServerRequest.toServerResponse(request))
      exchange.route = routeOf(request)
      exchange.requestId = saneRequestId(request.headers["x-request-id"])
      exchange.span = Option.getOrUndefined(yield* Effect.option(Effect.currentParentSpan))
      return yield* Effect.provideService(app, CurrentExchange, exchange)
    })
  )
