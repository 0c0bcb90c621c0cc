import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, LogLevel, References, Schedule } from "effect"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { Metrics, MetricsLive } from "../../src/telemetry/Metrics.js"
import { type Exchange, makeRequestObserver, type RequestObserver, saneRequestId } from "../../src/http/RequestObservation.js"
import { withTraceIds } from "../../src/telemetry/Telemetry.js"
import { jsonLogger } from "../../src/telemetry/LogFormat.js"
import { parsePrometheusText, samplesOf } from "../../testing/PrometheusText.js"

/** What a port's handler does with a request once its record is started. */
type Handler = (request: http.IncomingMessage, response: http.ServerResponse, exchange: Exchange) => void

/** A node server whose every request is observed, then handed to `handle`. */
const serverWith = (observer: RequestObserver, handle: Handler) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.callback<http.Server>((resume) => {
        const server = http.createServer((request, response) => handle(request, response, observer.observe(request, response)))
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
    ),
    (server) => (server.address() as AddressInfo).port
  )

/** Sends one request and resolves once its answer is read (or, with `abortAfterMs`, once the client has left). */
const send = (port: number, method: string, path: string, abortAfterMs?: number) =>
  Effect.callback<number>((resume) => {
    const request = http.request({ host: "127.0.0.1", port, method, path }, (response) => {
      response.resume()
      response.on("end", () => resume(Effect.succeed(response.statusCode ?? 0)))
    })
    request.on("error", () => resume(Effect.succeed(0)))
    request.end()
    if (abortAfterMs !== undefined) setTimeout(() => request.destroy(), abortAfterMs)
  })

const scraped = Effect.map(Effect.flatMap(Metrics, (metrics) => metrics.exposition), parsePrometheusText)

/** The JSON lines the observer writes, as `LoggingLive` writes them (trace ids included), at `level`. */
const capturedAt = (level: LogLevel.LogLevel) => {
  const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
  const logger = withTraceIds(Logger.map(jsonLogger, (line) => void lines.push(JSON.parse(line))))
  return { lines, layer: Layer.merge(Logger.layer([logger]), Layer.succeed(References.MinimumLogLevel, level)) }
}

/** An observer of requests that writes no line: for the cases about the metric. */
const unlogged = Effect.provide(makeRequestObserver, Layer.succeed(References.MinimumLogLevel, "None"))

const metricsLive = MetricsLive("test-service").pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))

/** Polls until `done` holds: a response's `close` comes just after the client has read it. */
const eventually = <A>(read: Effect.Effect<A>, done: (a: A) => boolean) =>
  read.pipe(Effect.filterOrFail(done), Effect.retry(Schedule.spaced("20 millis")), Effect.timeout("5 seconds"), Effect.orDie)

describe("the record of each request", () => {
  it.live("records its duration by method, route template and status once its response closes", () =>
    Effect.gen(function*() {
      const port = yield* serverWith(yield* unlogged, (request, response, exchange) => {
        if (request.url?.startsWith("/things/")) exchange.route = "/things/{id}"
        setTimeout(() => response.writeHead(exchange.route === undefined ? 404 : 200).end("{}"), 30)
      })
      expect(yield* send(port, "GET", "/things/1")).toBe(200)
      expect(yield* send(port, "GET", "/things/2?secret=x")).toBe(200)
      expect(yield* send(port, "POST", "/nothing/here")).toBe(404)
      expect(yield* send(port, "PROPFIND", "/things/3")).toBe(200)
      const families = yield* eventually(scraped, (f) => samplesOf(f, "http_server_request_duration_seconds_count").length === 3)
      const count = (labels: Record<string, string>) => samplesOf(families, "http_server_request_duration_seconds_count", labels)
      expect(count({ http_request_method: "GET", http_route: "/things/{id}", http_response_status_code: "200" })[0]!.value).toBe(2)
      const unmatched = count({ http_request_method: "POST", http_response_status_code: "404" })
      expect(unmatched[0]!.value).toBe(1)
      expect(unmatched[0]!.labels["http_route"]).toBeUndefined()
      // A method OpenTelemetry does not name cannot mint series of its own.
      expect(count({ http_request_method: "_OTHER", http_route: "/things/{id}" })[0]!.value).toBe(1)
      const sum = samplesOf(families, "http_server_request_duration_seconds_sum", { http_request_method: "GET" })[0]!.value
      expect(sum).toBeGreaterThanOrEqual(0.055)
      expect(sum).toBeLessThan(2)
    }).pipe(Effect.provide(metricsLive)))

  it.live("counts a request whose client left before any answer as aborted, with no status", () =>
    Effect.gen(function*() {
      const port = yield* serverWith(yield* unlogged, (_request, _response, exchange) => {
        exchange.route = "/slow"
      })
      yield* send(port, "GET", "/slow", 50)
      const families = yield* eventually(scraped, (f) => samplesOf(f, "http_server_request_duration_seconds_count").length === 1)
      const [aborted] = samplesOf(families, "http_server_request_duration_seconds_count", { http_route: "/slow" })
      expect(aborted!.labels).toMatchObject({ "error_type": "aborted" })
      expect(aborted!.labels["http_response_status_code"]).toBeUndefined()
    }).pipe(Effect.provide(metricsLive)))

  it.live("writes one Info line per request with the documented fields, in the request's trace", () =>
    Effect.gen(function*() {
      const { lines, layer } = capturedAt("Info")
      const observer = yield* Effect.provide(makeRequestObserver, layer)
      const span = yield* Effect.makeSpanScoped("GET /things/{id}")
      const port = yield* serverWith(observer, (request, response, exchange) => {
        exchange.route = "/things/{id}"
        exchange.requestId = saneRequestId(request.headers["x-request-id"]) ?? "generated"
        exchange.tenant = "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f"
        exchange.tokenPrefix = "ap_pat_abc"
        exchange.span = span
        response.writeHead(403).end()
      })
      yield* send(port, "DELETE", "/things/1?token=secret")
      yield* eventually(Effect.sync(() => lines.length), (n) => n === 1)
      expect(lines[0]!.message).toBe("request")
      expect(lines[0]!.annotations).toEqual({
        method: "DELETE",
        route: "/things/{id}",
        status: 403,
        duration_ms: expect.any(Number),
        tenant: "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f",
        token_prefix: "ap_pat_abc",
        request_id: "generated",
        traceId: span.traceId,
        spanId: span.spanId
      })
      expect(JSON.stringify(lines)).not.toContain("secret")
    }).pipe(Effect.provide(metricsLive)))

  it.live("writes no line below Info, and still records the metric", () =>
    Effect.gen(function*() {
      const { lines, layer } = capturedAt("Warn")
      const port = yield* serverWith(yield* Effect.provide(makeRequestObserver, layer), (_request, response) => response.writeHead(204).end())
      yield* send(port, "GET", "/")
      yield* eventually(scraped, (f) => samplesOf(f, "http_server_request_duration_seconds_count").length === 1)
      expect(lines).toEqual([])
    }).pipe(Effect.provide(metricsLive)))
})

describe("saneRequestId", () => {
  it("keeps a token-like id and refuses what could forge a log line or grow without bound", () => {
    expect(saneRequestId("req-1.2:3_x")).toBe("req-1.2:3_x")
    expect(saneRequestId("two words")).toBeUndefined()
    expect(saneRequestId("a\nb")).toBeUndefined()
    expect(saneRequestId("x".repeat(129))).toBeUndefined()
    expect(saneRequestId(["a", "b"])).toBeUndefined()
    expect(saneRequestId(undefined)).toBeUndefined()
  })
})
