import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import { TraceFlags } from "@opentelemetry/api"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler
} from "@opentelemetry/sdk-trace-base"
import { Config, Context, Effect, Layer, Option, Tracer } from "effect"
import { invalidSetting } from "../config/Settings.js"
import packageJson from "../../package.json" with { type: "json" }

// Every workspace is versioned in lockstep with the platform, so its version names the build. A
// static import, not a read relative to this file: a bundle (npm run build) carries it.
const platformVersion: string = packageJson.version

/**
 * The `service.name` and `service.version` of everything a service exports (spans, metrics):
 * `OTEL_SERVICE_NAME` when set, else the service's own name.
 */
export const serviceIdentity = (defaultServiceName: string) =>
  Config.NonEmptyString("OTEL_SERVICE_NAME").pipe(
    Config.withDefault(defaultServiceName),
    Config.map((serviceName) => ({ serviceName, serviceVersion: platformVersion }))
  )

/** The samplers of the OpenTelemetry specification's `OTEL_TRACES_SAMPLER`, by name, given `OTEL_TRACES_SAMPLER_ARG`. */
const TracesSamplers = {
  always_on: () => new AlwaysOnSampler(),
  always_off: () => new AlwaysOffSampler(),
  traceidratio: (ratio: number) => new TraceIdRatioBasedSampler(ratio),
  parentbased_always_on: () => new ParentBasedSampler({ root: new AlwaysOnSampler() }),
  parentbased_always_off: () => new ParentBasedSampler({ root: new AlwaysOffSampler() }),
  parentbased_traceidratio: (ratio: number) => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) })
} satisfies Record<string, (ratio: number) => Sampler>

type TracesSamplerName = keyof typeof TracesSamplers

/** The values `OTEL_TRACES_SAMPLER` takes; the chart's schema offers the same. */
export const TracesSamplerNames = Object.keys(TracesSamplers) as ReadonlyArray<TracesSamplerName>

const DefaultTracesSampler: TracesSamplerName = "parentbased_always_on"

// Each check comes before its default: the other way round, Effect's refusal names no variable.
// Empty counts as unset, as the OpenTelemetry specification says of its variables.
const tracesSamplerName = Config.String("OTEL_TRACES_SAMPLER").pipe(
  Config.mapEffect((value): Effect.Effect<TracesSamplerName, Config.ConfigError> => {
    const name = value.trim() === "" ? DefaultTracesSampler : value.trim()
    return Object.hasOwn(TracesSamplers, name)
      ? Effect.succeed(name as TracesSamplerName)
      : Effect.fail(invalidSetting("OTEL_TRACES_SAMPLER", `Expected one of ${TracesSamplerNames.join(", ")} but received ${JSON.stringify(value)}`))
  }),
  Config.withDefault(DefaultTracesSampler)
)

// A decimal number only: JavaScript's Number() would also read "0x1" or "Infinity".
const DecimalNumber = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

const tracesSamplerRatio = Config.String("OTEL_TRACES_SAMPLER_ARG").pipe(
  Config.mapEffect((value) => {
    if (value.trim() === "") return Effect.succeed(1)
    const ratio = Number(value)
    return DecimalNumber.test(value.trim()) && ratio >= 0 && ratio <= 1
      ? Effect.succeed(ratio)
      : Effect.fail(invalidSetting("OTEL_TRACES_SAMPLER_ARG", `Expected a sampling ratio from 0 to 1 but received ${JSON.stringify(value)}`))
  }),
  Config.withDefault(1)
)

/**
 * The sampler of the service's spans: `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`) and
 * its ratio `OTEL_TRACES_SAMPLER_ARG` (default 1), as the OpenTelemetry specification defines
 * them. Read here rather than left to the SDK, which falls back to its default on a value it does
 * not know: a typo would keep every trace, or drop them all, without a word. The ratio is checked
 * whatever the sampler, so that a wrong one is not found only on the day it comes into use.
 */
export const tracesSamplerConfig: Config.Config<Sampler> = Config.map(
  Config.all([tracesSamplerName, tracesSamplerRatio]),
  ([name, ratio]) => TracesSamplers[name](ratio)
)

/**
 * A parent read from a `traceparent` (an Effect `ExternalSpan`) must reach the SDK with its
 * sampled flag, or a parent-based sampler would keep every continued trace. The OpenTelemetry
 * flags are added from the span's own `sampled` when it does not carry them, once here for every
 * way a trace comes in (HTTP, NATS, the outbox, the dispatcher's stored events), rather than
 * relying on each exporter's fallback.
 */
const withParentFlags = (parent: Option.Option<Tracer.AnySpan>): Option.Option<Tracer.AnySpan> => {
  if (Option.isNone(parent) || parent.value._tag !== "ExternalSpan") return parent
  const external = parent.value
  if (Option.isSome(Context.getOption(external.annotations, OtelTracer.OtelTraceFlags))) return parent
  const flags = external.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE
  return Option.some({ ...external, annotations: Context.add(external.annotations, OtelTracer.OtelTraceFlags, flags) })
}

const followingParentFlags = Layer.unwrap(
  Effect.map(Effect.tracer, (tracer) =>
    Layer.succeed(
      Tracer.Tracer,
      Tracer.make({
        span: (options) => tracer.span({ ...options, parent: withParentFlags(options.parent) }),
        context: tracer.context
      })
    ))
)

/**
 * OpenTelemetry export of the service's spans over OTLP/HTTP (JSON) when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, sampled by
 * `tracesSamplerConfig`. The exporter and the batch processor read the standard variables
 * themselves (endpoint, `/v1/traces` path, headers, `OTEL_BSP_*`), so an SRE's usual settings
 * behave as documented by OpenTelemetry. Unset: no provider, no exporter, no socket; Effect's own
 * tracer still gives every span its ids, which the logs carry, as does a span sampled out. The
 * sampler is checked either way, so that a wrong one stops the service before export is turned
 * on. Releasing the layer flushes the pending spans, so it must close after the servers.
 */
export const TelemetryLive = (defaultServiceName: string): Layer.Layer<never, Config.ConfigError> =>
  Layer.unwrap(
    Effect.gen(function*() {
      const sampler = yield* tracesSamplerConfig
      // Empty counts as unset, as the OpenTelemetry specification says of its variables.
      const tracesEndpoint = yield* Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").pipe(Config.withDefault(""))
      const endpoint = yield* Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.withDefault(""))
      if (tracesEndpoint.trim() === "" && endpoint.trim() === "") return Layer.empty
      const resource = yield* serviceIdentity(defaultServiceName)
      return Layer.provide(
        followingParentFlags,
        NodeSdk.layer(() => ({
          resource,
          tracerConfig: { sampler },
          spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter()),
          shutdownTimeout: "5 seconds"
        }))
      )
    })
  )

export { withTraceIds } from "./LogFormat.js"
