import { ROOT_CONTEXT, type TextMapGetter, type TextMapSetter, trace, TraceFlags } from "@opentelemetry/api"
import { W3CTraceContextPropagator } from "@opentelemetry/core"
import { Tracer } from "effect"

/**
 * W3C trace context (level 1) across every hop, HTTP or NATS or a stored event, by OpenTelemetry's
 * own propagator, so that the services read and write `traceparent` by one rule, the spec's. Only
 * `traceparent` is handled: Effect's spans carry no tracestate, and the gateway passes the client's
 * on itself when it continues the client's trace.
 */
const propagator = new W3CTraceContextPropagator()

type Header = string | ReadonlyArray<string> | null | undefined

/**
 * The carrier is the header's value itself. A repeated header (an array) names no single parent
 * and is ignored, where the propagator would take the first. Trimmed whole, as the gateway always
 * read it, where the propagator allows one white-space character at each end.
 */
const headerValue: TextMapGetter<Header> = {
  get: (carrier) => typeof carrier === "string" ? carrier.trim() : undefined,
  keys: () => []
}

const headerRecord: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value
  }
}

/**
 * The span a `traceparent` names, to continue its trace, or `undefined` when the header is absent,
 * repeated or invalid (upper-case hex, all-zero ids, version `ff`, a version-00 header of the wrong
 * length): the receiver then starts the trace. A later version is read by its first four fields.
 */
export const parentSpanOf = (traceparent: Header): Tracer.ExternalSpan | undefined => {
  const parent = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, traceparent, headerValue))
  return parent === undefined ? undefined : Tracer.externalSpan({
    traceId: parent.traceId,
    spanId: parent.spanId,
    sampled: (parent.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED
  })
}

/**
 * The headers that name `span` as the parent of the next hop: its `traceparent`, with its sampled
 * flag. None for a span without valid W3C ids, which Effect's and OpenTelemetry's tracers never give.
 */
export const traceContextHeadersOf = (
  span: { readonly traceId: string; readonly spanId: string; readonly sampled: boolean }
): { readonly traceparent?: string } => {
  const headers: Record<string, string> = {}
  const context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: span.traceId,
    spanId: span.spanId,
    traceFlags: span.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE
  })
  propagator.inject(context, headers, headerRecord)
  return headers
}
