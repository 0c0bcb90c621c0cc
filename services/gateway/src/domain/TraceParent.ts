import { Tracer } from "effect"

const hex2 = /^[0-9a-f]{2}$/
const traceIdShape = /^[0-9a-f]{32}$/
const spanIdShape = /^[0-9a-f]{16}$/

/**
 * The client's span from a W3C `traceparent` header (Trace Context level 1), or `undefined` when
 * the header is absent, repeated or invalid: the gateway then starts the trace. Stricter than
 * Effect's own reader on purpose: the spec asks to ignore upper-case hex, all-zero ids, version
 * `ff`, and a version-00 header of the wrong length, rather than continue a trace from them.
 * A later version is read by its first four fields, as the spec allows.
 */
export const parseTraceParent = (header: string | ReadonlyArray<string> | undefined): Tracer.ExternalSpan | undefined => {
  if (typeof header !== "string") return undefined
  const value = header.trim()
  if (value.length < 55) return undefined
  const version = value.slice(0, 2)
  if (!hex2.test(version) || version === "ff") return undefined
  if (version === "00" ? value.length !== 55 : value.length > 55 && value[55] !== "-") return undefined
  if (value[2] !== "-" || value[35] !== "-" || value[52] !== "-") return undefined
  const traceId = value.slice(3, 35)
  const spanId = value.slice(36, 52)
  const flags = value.slice(53, 55)
  if (!traceIdShape.test(traceId) || traceId === "00000000000000000000000000000000") return undefined
  if (!spanIdShape.test(spanId) || spanId === "0000000000000000") return undefined
  if (!hex2.test(flags)) return undefined
  return Tracer.externalSpan({ traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 })
}

/** The `traceparent` that names `span` as the parent of the next hop. */
export const traceParentOf = (span: { readonly traceId: string; readonly spanId: string; readonly sampled: boolean }): string =>
  `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
