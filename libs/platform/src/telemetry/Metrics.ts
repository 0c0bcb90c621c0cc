import * as Resource from "@effect/opentelemetry/Resource"
import { type BatchObservableResult, createNoopMeter, type Meter, type Observable } from "@opentelemetry/api"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { MeterProvider, type MetricData, type MetricReader, PeriodicExportingMetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics"
import { Config, Context, Duration, Effect, Layer, Option } from "effect"
import { integerAtLeast } from "../config/Settings.js"
import { serviceIdentity } from "./Telemetry.js"

/**
 * A service's metrics (docs/observability.md): OpenTelemetry instruments on one meter, read by
 * Prometheus at `GET /metrics` on the admin port and, when configured, exported over OTLP.
 */
export interface MetricsShape {
  readonly meter: Meter
  /** Every instrument's current value in the Prometheus text format 0.0.4, observable ones read now: what `GET /metrics` answers. */
  readonly exposition: Effect.Effect<string>
}

/** What code outside a service (unit tests, tools) records into: nothing. */
const unrecorded: MetricsShape = { meter: createNoopMeter(), exposition: Effect.succeed("") }

/**
 * The metrics of the process. A reference rather than a requirement: `runService` provides the real
 * one (`MetricsLive`) to everything a service builds, and code run elsewhere records into a no-op
 * meter without having to provide anything.
 */
export const Metrics = Context.Reference<MetricsShape>("@portfolio/platform/Metrics", { defaultValue: () => unrecorded })
export type Metrics = MetricsShape

export const PrometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

/**
 * The Prometheus suffix of each UCUM unit the services use, as OpenTelemetry's Prometheus
 * compatibility rules add it (the collector and Prometheus's own OTLP receiver do the same, so a
 * dashboard reads the same names whichever way the metrics travel); a new unit gets its suffix
 * here with its first instrument. A unit in braces (`{connection}`) is an annotation, not a unit:
 * no suffix.
 */
const unitSuffixes: Readonly<Record<string, string>> = { s: "seconds", By: "bytes" }

/** The OpenTelemetry name of an instrument with its unit's Prometheus suffix (`http.server.request.duration` in `s`: `http.server.request.duration_seconds`). */
export const withUnitSuffix = (name: string, unit: string): string => {
  const suffix = unitSuffixes[unit]
  return suffix === undefined || name.endsWith(`_${suffix}`) ? name : `${name}_${suffix}`
}

/**
 * The JavaScript exporter's serializer adds `_total` to counters but no unit suffix, and writes an
 * OpenMetrics `# UNIT` line: the names get their suffix here and the unit, now in the name, is
 * dropped, so that the exposition is plain 0.0.4.
 */
const withPrometheusNames = (collected: ResourceMetrics): ResourceMetrics => ({
  resource: collected.resource,
  scopeMetrics: collected.scopeMetrics.map((scope) => ({
    ...scope,
    metrics: scope.metrics.map((metric): MetricData => ({
      ...metric,
      descriptor: { ...metric.descriptor, name: withUnitSuffix(metric.descriptor.name, metric.descriptor.unit), unit: "" }
    }) as MetricData)
  }))
})

/** How long a scrape may wait for the observable instruments: below Prometheus's default scrape timeout of 10 s. */
const CollectTimeoutMs = 5_000

/** The metrics of `meter`, read for Prometheus through `scrape` (a reader that never listens: the admin port serves it). */
const metricsOf = (meter: Meter, scrape: PrometheusExporter): MetricsShape => {
  const serializer = new PrometheusSerializer()
  return {
    meter,
    exposition: Effect.map(
      Effect.promise(() => scrape.collect({ timeoutMillis: CollectTimeoutMs })),
      ({ resourceMetrics }) => {
        const text = serializer.serialize(withPrometheusNames(resourceMetrics))
        // With nothing recorded yet the serializer ends on a comment without the line feed that
        // the format requires after every line.
        return text.endsWith("\n") ? text : `${text}\n`
      }
    )
  }
}

/**
 * The OTLP/HTTP export of the metrics when `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set, as for the spans (Telemetry.ts): the exporter reads the
 * standard variables itself (endpoint and `/v1/metrics`, headers, temporality), the reader's
 * period is `OTEL_METRIC_EXPORT_INTERVAL` (default 60 s) and `OTEL_METRIC_EXPORT_TIMEOUT` (30 s).
 */
const otlpReaders = Effect.gen(function*() {
  const metricsEndpoint = yield* Config.String("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").pipe(Config.withDefault(""))
  const endpoint = yield* Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.withDefault(""))
  if (metricsEndpoint.trim() === "" && endpoint.trim() === "") return []
  const intervalMs = yield* integerAtLeast("OTEL_METRIC_EXPORT_INTERVAL", 1, 60_000)
  const timeoutMs = yield* integerAtLeast("OTEL_METRIC_EXPORT_TIMEOUT", 1, 30_000)
  // The reader refuses a timeout longer than its period.
  return [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), exportIntervalMillis: intervalMs, exportTimeoutMillis: Math.min(timeoutMs, intervalMs) })]
})

/**
 * The metrics of a service: one meter provider with the resource of its spans (`service.name`,
 * `service.version`, `OTEL_RESOURCE_ATTRIBUTES`), read by `GET /metrics` and, when configured,
 * exported over OTLP. Releasing the layer exports what was recorded since the last export, so it
 * must close after the servers (as `runService` does).
 */
export const MetricsLive = (defaultServiceName: string): Layer.Layer<never> =>
  Layer.effect(
    Metrics,
    Effect.gen(function*() {
      const identity = yield* serviceIdentity(defaultServiceName)
      const resource = yield* Effect.provide(Resource.Resource, Resource.layerFromEnv(Resource.configToAttributes(identity)))
      const scrape = new PrometheusExporter({ preventServerStart: true })
      const readers: Array<MetricReader> = [scrape, ...(yield* otlpReaders)]
      const provider = yield* Effect.acquireRelease(
        Effect.sync(() => new MeterProvider({ resource, readers })),
        (provider) =>
          Effect.tryPromise(() => provider.shutdown()).pipe(Effect.ignore({ log: "Debug" }), Effect.interruptible, Effect.timeoutOption("5 seconds"))
      )
      return metricsOf(provider.getMeter("portfolio"), scrape)
    }).pipe(Effect.orDie)
  )

/**
 * An instrument declared once by the module that records it, use cases included: like spans and
 * logs, a metric is recorded where its event happens. Made on first use, once per meter.
 */
export const instrument = <I>(make: (meter: Meter) => I): Effect.Effect<I> => {
  const made = new WeakMap<Meter, I>()
  return Effect.map(Metrics, ({ meter }) => {
    const known = made.get(meter)
    if (known !== undefined) return known
    const fresh = make(meter)
    made.set(meter, fresh)
    return fresh
  })
}

/** The longest one reading of observable instruments may take: a scrape must not hang on a stuck dependency. */
const ReadingTimeout = Duration.seconds(2)

/**
 * Reports `instruments` (observable gauges and counters) from a reading made when a scrape or an
 * export asks for them, for the life of the scope. A reading is reused for `reuseFor`, and readers
 * asking while one is under way share it, so that a scrape, an export and a second Prometheus
 * cost the dependency one query. A reading that fails or times out is logged and reports nothing,
 * and the next is not tried before `reuseFor` either: a dependency that is down is not asked at
 * every scrape. (The OpenTelemetry SDK keeps the last value of a series that was not reported:
 * the log line says why it no longer moves.)
 */
export const observe = <A, E, R>(options: {
  readonly instruments: ReadonlyArray<Observable>
  readonly read: Effect.Effect<A, E, R>
  readonly report: (observed: BatchObservableResult, reading: NoInfer<A>) => void
  readonly reuseFor: Duration.Input
}) =>
  Effect.gen(function*() {
    const { meter } = yield* Metrics
    const run = Effect.runPromiseWith(yield* Effect.context<R>())
    const reuseMs = Duration.toMillis(options.reuseFor)
    let last: { readonly atMs: number; readonly reading: Option.Option<A> } | undefined
    let underWay: Promise<Option.Option<A>> | undefined
    const read = options.read.pipe(
      Effect.timeout(ReadingTimeout),
      Effect.asSome,
      Effect.catchCause((cause) => Effect.as(Effect.logWarning("metrics not read; their series keep their last value", cause), Option.none<A>())),
      Effect.tap((reading) => Effect.sync(() => void (last = { atMs: performance.now(), reading })))
    )
    const reading = (): Promise<Option.Option<A>> => {
      if (last !== undefined && performance.now() - last.atMs < reuseMs) return Promise.resolve(last.reading)
      underWay ??= run(read).finally(() => void (underWay = undefined))
      return underWay
    }
    const callback = async (observed: BatchObservableResult) => {
      const found = await reading()
      if (Option.isSome(found)) options.report(observed, found.value)
    }
    const observed = [...options.instruments]
    yield* Effect.acquireRelease(
      Effect.sync(() => meter.addBatchObservableCallback(callback, observed)),
      () => Effect.sync(() => meter.removeBatchObservableCallback(callback, observed))
    )
  })
