import { NodeSdk } from "@effect/opentelemetry"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Config, Context, Effect, FiberRef, FiberRefs, HashMap, Layer, Logger, Option, Tracer } from "effect"
import packageJson from "../package.json" with { type: "json" }

// Every workspace is versioned in lockstep with the platform, so its version names the build. A
// static import, not a read relative to this file: a bundle (npm run build) carries it.
const platformVersion: string = packageJson.version

/**
 * The `service.name` and `service.version` of everything a service exports (spans, metrics):
 * `OTEL_SERVICE_NAME` when set, else the service's own name.
 */
export const serviceIdentity = (defaultServiceName: string) =>
  Config.nonEmptyString("OTEL_SERVICE_NAME").pipe(
    Config.withDefault(defaultServiceName),
    Config.map((serviceName) => ({ serviceName, serviceVersion: platformVersion }))
  )

/**
 * OpenTelemetry export of the service's spans over OTLP/HTTP (JSON) when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set. The exporter and the
 * batch processor read the standard variables themselves (endpoint, `/v1/traces` path, headers,
 * `OTEL_BSP_*`), so an SRE's usual settings behave as documented by OpenTelemetry. Unset: no
 * provider, no exporter, no socket; Effect's own tracer still gives every span its ids, which the
 * logs carry. Releasing the layer flushes the pending spans, so it must close after the servers.
 */
export const TelemetryLive = (defaultServiceName: string): Layer.Layer<never, never, never> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      // Empty counts as unset, as the OpenTelemetry specification says of its variables.
      const tracesEndpoint = yield* Config.string("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").pipe(Config.withDefault(""))
      const endpoint = yield* Config.string("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.withDefault(""))
      if (tracesEndpoint.trim() === "" && endpoint.trim() === "") return Layer.empty
      const resource = yield* serviceIdentity(defaultServiceName)
      return Layer.discard(
        NodeSdk.layer(() => ({
          resource,
          spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter()),
          shutdownTimeout: "5 seconds"
        }))
      )
    }).pipe(Effect.orDie)
  )

/** The span a log line is written in, read from the fiber's context as the log call saw it. */
const currentSpan = (context: FiberRefs.FiberRefs): Option.Option<Tracer.AnySpan> =>
  Context.getOption(FiberRefs.getOrDefault(context, FiberRef.currentContext), Tracer.ParentSpan)

/**
 * Adds `traceId` and `spanId` to the annotations of every line written inside a span, so that a
 * log line leads to its trace and back, exporter or not.
 */
export const withTraceIds = <Message, Output>(logger: Logger.Logger<Message, Output>): Logger.Logger<Message, Output> =>
  Logger.mapInputOptions(logger, (options) => {
    const span = currentSpan(options.context)
    if (Option.isNone(span)) return options
    return {
      ...options,
      annotations: HashMap.set(HashMap.set(options.annotations, "traceId", span.value.traceId as unknown), "spanId", span.value.spanId)
    }
  })

const TraceId = /^[0-9a-f]{32}$/i
const SpanId = /^[0-9a-f]{16}$/i

/**
 * The span a W3C `traceparent` names, by the rule of @effect/platform's `HttpTraceContext.w3c`
 * (version 00 only), from the string alone: the dispatcher reads one per event and per attempt,
 * where building a `Headers` for it cost more than the parse.
 */
export const parseTraceparent = (traceparent: string | null | undefined): Option.Option<Tracer.ExternalSpan> => {
  if (!traceparent) return Option.none()
  const [version, traceId, spanId, flags, ...more] = traceparent.split("-")
  if (version !== "00" || more.length > 0 || flags === undefined || !TraceId.test(traceId!) || !SpanId.test(spanId!)) return Option.none()
  return Option.some(Tracer.externalSpan({ traceId: traceId!, spanId: spanId!, sampled: (parseInt(flags, 16) & 1) === 1 }))
}
