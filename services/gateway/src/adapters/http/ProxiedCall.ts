import { type Exchange, spanNameOf } from "@portfolio/platform/http"
import { parentSpanOf } from "@portfolio/platform/telemetry"
import { type Clock, Context, type Effect, Exit, Option, type Tracer } from "effect"
import type http from "node:http"
import type { AllowList } from "../../domain/AllowList.js"
import type { admitRequest, PublicCall } from "../../usecases/AdmitRequest.js"
import type { countRequest } from "../../usecases/rate-limit/RateLimiting.js"
import { clientAddressOf, requestIdOf, type RequestTarget } from "./ClientRequest.js"
import type { UpstreamForwarderShape } from "../../ports/UpstreamForwarder.js"

/** Only the admission and the counting need the runtime: the rest of a proxied call is plain node streaming. */
export type AdmissionContext =
  | Effect.Services<ReturnType<typeof admitRequest>>
  | Effect.Services<ReturnType<typeof countRequest>>

/** What the hot path needs at hand, gathered once at start-up. */
export interface HotPath {
  readonly allowList: AllowList
  readonly trustedProxyHops: number
  readonly errorsUrl: string
  readonly secret: string
  readonly forwarder: UpstreamForwarderShape
  readonly tracer: Tracer.Tracer
  readonly clock: Clock.Clock
  /** Runs an effect of the admission on the runtime captured at start, handing its exit to node code. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, AdmissionContext>, options: { readonly onExit: (exit: Exit.Exit<A, E>) => void }) => unknown
}

/**
 * One call on the hot path, read once from the node request: what the admission decides on (it
 * is the `PublicCall` itself) and what answering it needs.
 */
export interface ProxiedCall extends PublicCall {
  readonly request: http.IncomingMessage
  readonly response: http.ServerResponse
  /** The query string with its `?`, or "": it goes upstream as it came. */
  readonly search: string
  readonly requestId: string
  readonly span: Tracer.Span
  /** Whether the span continues the client's trace: only then is the client's `tracestate` passed on. */
  readonly traceContinued: boolean
  /** The call's record (its duration metric and log line), told the caller's tenant and token once authenticated. */
  readonly exchange: Exchange
}

const emptyContext = Context.empty()
/** How a request span that answered 5xx, or none, ends: failed, so that backends count it as an error. */
const serverError = Exit.fail("the request was answered 5xx or not at all")

/**
 * Reads a proxied call and opens its server span. The allow-list's route is matched here, once,
 * for the span's name, the admission and the call's record. The span is `{METHOD} {route}` (or
 * `{METHOD} unmatched`), continues the client's trace when its `traceparent` is valid, and ends
 * when the response closes, with the status sent. Without an exporter this is Effect's in-memory
 * span: a few objects, no I/O.
 */
export const openCall = (
  hot: HotPath,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  target: RequestTarget,
  exchange: Exchange
): ProxiedCall => {
  const method = request.method ?? "GET"
  const route = hot.allowList.match(method, target.path)
  const clientIp = clientAddressOf(request, hot.trustedProxyHops)
  const parent = parentSpanOf(request.headers.traceparent)
  const span = hot.tracer.span({
    name: spanNameOf(method, route),
    parent: parent === undefined ? Option.none() : Option.some(parent),
    annotations: emptyContext,
    links: [],
    startTime: hot.clock.currentTimeNanosUnsafe(),
    kind: "server",
    root: false,
    // As Effect decides for the spans it opens: a parent that was not sampled leaves its children unsampled.
    sampled: parent?.sampled !== false
  })
  span.attribute("http.request.method", method)
  span.attribute("url.path", target.path)
  span.attribute("client.address", clientIp)
  if (route !== undefined) span.attribute("http.route", route.template)
  response.once("close", () => {
    if (response.headersSent) span.attribute("http.response.status_code", response.statusCode)
    const failed = !response.headersSent || response.statusCode >= 500
    span.end(hot.clock.currentTimeNanosUnsafe(), failed ? serverError : Exit.void)
  })
  const requestId = requestIdOf(request)
  exchange.route = route?.template
  exchange.requestId = requestId
  exchange.span = span
  return {
    request,
    response,
    method,
    path: target.path,
    search: target.search,
    route,
    authorization: request.headers.authorization,
    clientIp,
    requestId,
    span,
    traceContinued: parent !== undefined,
    exchange
  }
}
