import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, References, Scope } from "effect"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { instrument, Metrics, MetricsLive, observe, withUnitSuffix } from "../../src/telemetry/Metrics.js"
import { HttpDurationBuckets } from "../../src/http/RequestObservation.js"
import { parsePrometheusText, samplesOf } from "../../testing/PrometheusText.js"

/** A service's metrics as `runService` gives them, configured by `settings` alone. */
const metricsOf = (settings: Record<string, string> = {}) =>
  MetricsLive("test-service").pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(settings))))

const exposition = Effect.flatMap(Metrics, (metrics) => metrics.exposition)
const scraped = Effect.map(exposition, parsePrometheusText)

describe("withUnitSuffix", () => {
  it("adds the Prometheus name of the unit, once, and nothing for an annotation in braces", () => {
    expect(withUnitSuffix("http.server.request.duration", "s")).toBe("http.server.request.duration_seconds")
    expect(withUnitSuffix("already_seconds", "s")).toBe("already_seconds")
    expect(withUnitSuffix("db.client.connection.count", "{connection}")).toBe("db.client.connection.count")
  })
})

describe("the metrics of a service", () => {
  it.effect("exposes every instrument in the text format 0.0.4, under its Prometheus name, with the service's resource", () =>
    Effect.gen(function*() {
      const { meter } = yield* Metrics
      const histogram = meter.createHistogram("http.server.request.duration", {
        unit: "s",
        description: "Line one\nwith a back\\slash.",
        advice: { explicitBucketBoundaries: [...HttpDurationBuckets] }
      })
      histogram.record(0.02, { "http.route": "/things/{id}", "http.response.status_code": 200 })
      histogram.record(12, { "http.route": "/things/{id}", "http.response.status_code": 200 })
      meter.createCounter("portfolio.test.things", { unit: "{thing}", description: "Things." }).add(3, { kind: "quoted \"one\"" })
      const text = yield* exposition
      const families = parsePrometheusText(text)

      expect(text).not.toContain("# UNIT")
      const duration = families.get("http_server_request_duration_seconds")!
      expect(duration).toMatchObject({ type: "histogram", help: "Line one\nwith a back\\slash." })
      const buckets = samplesOf(families, "http_server_request_duration_seconds_bucket", { http_route: "/things/{id}", http_response_status_code: "200" })
      expect(buckets.map((bucket) => bucket.labels["le"])).toEqual([...HttpDurationBuckets.map(String), "+Inf"])
      expect(buckets.find((bucket) => bucket.labels["le"] === "0.025")!.value).toBe(1)
      expect(buckets.find((bucket) => bucket.labels["le"] === "10")!.value).toBe(1)
      expect(samplesOf(families, "http_server_request_duration_seconds_count")[0]!.value).toBe(2)
      expect(samplesOf(families, "http_server_request_duration_seconds_sum")[0]!.value).toBeCloseTo(12.02)
      expect(families.get("portfolio_test_things_total")).toMatchObject({ type: "counter", samples: [expect.objectContaining({ value: 3, labels: expect.objectContaining({ kind: "quoted \"one\"" }) })] })
      expect(samplesOf(families, "target_info")[0]!.labels).toMatchObject({ service_name: "renamed", service_version: expect.stringMatching(/^\d+\.\d+\.\d+/) })
    }).pipe(Effect.provide(metricsOf({ OTEL_SERVICE_NAME: "renamed" }))))

  it.effect("exposes a valid text before anything is recorded: the service's resource alone", () =>
    Effect.gen(function*() {
      const families = yield* scraped
      expect([...families.keys()]).toEqual(["target_info"])
    }).pipe(Effect.provide(metricsOf())))

  it.effect("records nothing anywhere but in the service's own metrics: outside a service, the meter is a no-op", () =>
    Effect.gen(function*() {
      const { meter } = yield* Metrics
      meter.createCounter("portfolio.test.nowhere").add(1)
      expect(yield* exposition).toBe("")
    }))

  it.effect("makes a declared instrument once per meter", () =>
    Effect.gen(function*() {
      let made = 0
      const counter = instrument((meter) => {
        made++
        return meter.createCounter("portfolio.test.once")
      })
      const first = yield* counter
      expect(yield* counter).toBe(first)
      const other = yield* Effect.provide(counter, metricsOf())
      expect(other).not.toBe(first)
      expect(made).toBe(2)
      first.add(2)
      expect(samplesOf(yield* scraped, "portfolio_test_once_total")[0]!.value).toBe(2)
    }).pipe(Effect.provide(metricsOf())))
})

describe("observe", () => {
  it.live("reads when the metrics are read, reuses a reading, and shares one under way", () =>
    Effect.gen(function*() {
      const { meter } = yield* Metrics
      const gauge = meter.createObservableGauge("portfolio.test.backlog")
      let reads = 0
      yield* observe({
        instruments: [gauge],
        read: Effect.andThen(Effect.sleep("50 millis"), Effect.sync(() => ++reads)),
        reuseFor: "1 hour",
        report: (observed, value: number) => observed.observe(gauge, value, { queue: "q" })
      })
      const [a, b] = yield* Effect.all([scraped, scraped], { concurrency: 2 })
      const again = yield* scraped
      expect(reads).toBe(1)
      for (const families of [a, b, again]) expect(samplesOf(families, "portfolio_test_backlog", { queue: "q" })[0]!.value).toBe(1)
    }).pipe(Effect.provide(metricsOf())))

  it.live("asks a failing dependency again only after the reuse period, and not at all once the scope is closed", () =>
    Effect.gen(function*() {
      const { meter } = yield* Metrics
      const gauge = meter.createObservableGauge("portfolio.test.flaky")
      let failing = false
      let reads = 0
      const scope = yield* Scope.make()
      yield* observe({
        instruments: [gauge],
        read: Effect.suspend(() => {
          reads++
          return failing ? Effect.fail("database away") : Effect.succeed(reads)
        }),
        reuseFor: "100 millis",
        report: (observed, value) => observed.observe(gauge, value)
      }).pipe(Scope.provide(scope))
      expect(samplesOf(yield* scraped, "portfolio_test_flaky")[0]!.value).toBe(1)
      failing = true
      yield* Effect.sleep("150 millis")
      yield* scraped
      yield* scraped
      expect(reads).toBe(2)
      failing = false
      yield* Effect.sleep("150 millis")
      expect(samplesOf(yield* scraped, "portfolio_test_flaky")[0]!.value).toBe(3)
      yield* Scope.close(scope, Exit.void)
      yield* Effect.sleep("150 millis")
      yield* scraped
      expect(reads).toBe(3)
    }).pipe(Effect.provide(metricsOf()), Effect.provide(Layer.succeed(References.MinimumLogLevel, "None"))))
})

/** A fake OTLP/HTTP collector on loopback: the bodies posted to each path. */
const collector = Effect.map(
  Effect.acquireRelease(
    Effect.callback<{ readonly server: http.Server; readonly received: Map<string, Array<string>> }>((resume) => {
      const received = new Map<string, Array<string>>()
      const server = http.createServer((request, response) => {
        let body = ""
        request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk))
        request.on("end", () => {
          received.set(request.url ?? "", [...(received.get(request.url ?? "") ?? []), body])
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, received })))
    }),
    ({ server }) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  ),
  ({ server, received }) => ({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received })
)

describe("the OTLP export", () => {
  it.live("sends what was recorded to OTEL_EXPORTER_OTLP_ENDPOINT when the service stops, under the spans' resource", () =>
    Effect.gen(function*() {
      const otlp = yield* collector
      // The exporter reads the standard variables from the environment itself, as an SRE sets them.
      const previous = process.env["OTEL_EXPORTER_OTLP_ENDPOINT"]
      process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = otlp.url
      yield* Effect.addFinalizer(() => Effect.sync(() => (previous === undefined ? delete process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] : (process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = previous))))
      // Long before the periodic export: only the release's flush can send it.
      process.env["OTEL_METRIC_EXPORT_INTERVAL"] = "3600000"
      // Effect's default configuration reads the environment once, when first asked, as a service
      // does when it starts: a variable set since must be read anew.
      yield* Effect.gen(function*() {
        const { meter } = yield* Metrics
        meter.createCounter("portfolio.test.exported").add(5)
      }).pipe(Effect.provide(MetricsLive("exporting-service").pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv())))))
      const [body] = otlp.received.get("/v1/metrics") ?? []
      expect(body).toBeDefined()
      const payload = JSON.parse(body!)
      const [resourceMetrics] = payload.resourceMetrics
      expect(resourceMetrics.resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "exporting-service" } })
      const metric = resourceMetrics.scopeMetrics[0].metrics.find((m: any) => m.name === "portfolio.test.exported")
      expect(metric.sum.dataPoints[0].asInt ?? metric.sum.dataPoints[0].asDouble).toBe(5)
    }))
})
