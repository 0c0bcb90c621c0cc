import { PublicApi, PublicApiPrefix } from "@portfolio/domain"
import type { WindowState } from "../../ports/RateLimitStore.js"
import { AssertionHeader, ErrorsUrl, InternalSecret, signAssertion, writeProblem } from "@portfolio/platform"
import { Cause, Context, Effect, Either, Exit, Option, Runtime, type Tracer } from "effect"
import { randomUUID } from "node:crypto"
import type http from "node:http"
import { rateLimitHeaders } from "../../domain/RateLimitHeaders.js"
import { matchRoute, routeTableFrom } from "../../domain/RouteTable.js"
import { parseTraceParent, traceParentOf } from "../../domain/TraceParent.js"
import { GatewayConfig } from "../../Config.js"
import { admitRequest, type Verdict } from "../../usecases/AdmitRequest.js"
import { countRequest, rateLimitedError } from "../../usecases/RateLimiting.js"
import { clientAddress, requestIdOf } from "./ClientRequest.js"
import { rejectionHeaders } from "./RejectionHeaders.js"
import { MaxBodyBytes, UpstreamForwarder } from "./UpstreamForwarder.js"

const emptyContext = Context.empty()
/** How a request span that answered 5xx, or none, ends: failed, so that backends count it as an error. */
const serverError = Exit.fail("the request was answered 5xx or not at all")

/** Only the admission needs the runtime: the rest of a proxied call is plain node streaming. */
type AdmissionContext = Effect.Effect.Context<ReturnType<typeof admitRequest>> | Effect.Effect.Context<ReturnType<typeof countRequest>>

/**
 * The hot path of the gateway: every call to the public API (documentation pages aside). The
 * `admitRequest` use case decides; then the answer is either the gateway's own problem+json or the
 * upstream's, streamed through. Every answer carries the rate-limit headers and a request id; an
 * unexpected failure is logged and answered with a bare 500 that names nothing internal.
 */
export const makeProxyHandler = Effect.gen(function*() {
  const config = yield* GatewayConfig
  const errorsUrl = yield* ErrorsUrl
  const secret = yield* InternalSecret
  const forwarder = yield* UpstreamForwarder
  const runtime = yield* Effect.runtime<AdmissionContext>()
  const runCallback = Runtime.runCallback(runtime)
  const routes = routeTableFrom(PublicApi)
  const tracer = yield* Effect.tracer
  const clock = yield* Effect.clock
  // Span names and routes are computed once: per request they are a map lookup.
  const httpRoutes = new Map(routes.map((route) => [route, route.pattern.replace(/:(\w+)/g, "{$1}")] as const))

  /**
   * The request's server span, `{METHOD} {route}` (or `{METHOD} unmatched`, so that probing
   * random paths cannot multiply span names), continuing the client's trace when its
   * `traceparent` is valid. It ends when the response closes, with the status sent. Without an
   * exporter this is Effect's in-memory span: a few objects, no I/O.
   */
  const startSpan = (request: http.IncomingMessage, response: http.ServerResponse, method: string, path: string, clientIp: string) => {
    const route = matchRoute(routes, method, path)
    const httpRoute = Option.isSome(route) ? httpRoutes.get(route.value) : undefined
    const parent = parseTraceParent(request.headers.traceparent)
    const span = tracer.span(
      httpRoute === undefined ? `${method} unmatched` : `${method} ${httpRoute}`,
      parent === undefined ? Option.none() : Option.some(parent),
      emptyContext,
      [],
      clock.unsafeCurrentTimeNanos(),
      "server",
      { captureStackTrace: false }
    )
    span.attribute("http.request.method", method)
    span.attribute("url.path", path)
    span.attribute("client.address", clientIp)
    if (httpRoute !== undefined) span.attribute("http.route", httpRoute)
    response.once("close", () => {
      if (response.headersSent) span.attribute("http.response.status_code", response.statusCode)
      const failed = !response.headersSent || response.statusCode >= 500
      span.end(clock.unsafeCurrentTimeNanos(), failed ? serverError : Exit.void)
    })
    return { span, continued: parent !== undefined }
  }

  /** Logs the cause and answers 500, counted once: by the admission's window, else by client address. */
  const internalError = (
    response: http.ServerResponse,
    instance: string,
    answerHeaders: Record<string, string>,
    clientIp: string,
    window: WindowState | undefined,
    cause: Cause.Cause<unknown>,
    span?: Tracer.Span
  ) => {
    const counted = Effect.zipRight(
      Effect.logError("public request failed", cause),
      window === undefined ? Effect.map(countRequest({ clientIp }), (counted) => counted.state) : Effect.succeed(window)
    )
    const reported = span === undefined ? counted : Effect.withParentSpan(counted, span)
    runCallback(reported, {
      onExit: (exit) => {
        if (response.headersSent) return void response.destroy()
        const counted = Exit.isSuccess(exit) ? rateLimitHeaders(exit.value) : {}
        writeProblem(response, errorsUrl, "INTERNAL", "An internal error occurred. It has been logged.", instance, { ...counted, ...answerHeaders })
      }
    })
  }

  const proceed = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    path: string,
    search: string,
    method: string,
    requestId: string,
    clientIp: string,
    verdict: Verdict,
    trace: { readonly span: Tracer.Span; readonly continued: boolean }
  ) => {
    if (verdict.pat !== undefined) {
      trace.span.attribute("tenant.id", verdict.pat.tenantId)
      trace.span.attribute("pat.prefix", verdict.pat.tokenPrefix)
    }
    const answerHeaders = { ...rateLimitHeaders(verdict.window), "x-request-id": requestId }
    const { outcome } = verdict
    if (Either.isLeft(outcome)) {
      const error = outcome.left
      return writeProblem(response, errorsUrl, error.errorCode, error.detail, path, {
        ...answerHeaders,
        ...rejectionHeaders(error, verdict.window, verdict.decidedAtMs)
      })
    }
    if (Number(request.headers["content-length"] ?? "0") > MaxBodyBytes) {
      return writeProblem(response, errorsUrl, "PAYLOAD_TOO_LARGE", `The request body exceeds ${MaxBodyBytes} bytes.`, path, {
        ...answerHeaders,
        connection: "close"
      })
    }
    // The client left while the gateway was deciding: nobody would read the upstream's answer.
    if (request.socket.destroyed) return
    const { caller, route } = outcome.right
    forwarder.forward({
      upstream: route.upstream,
      method,
      pathAndQuery: `${path}${search}`,
      source: request,
      headers: {
        [AssertionHeader]: signAssertion(secret, caller, { method, path }),
        "x-forwarded-for": clientIp,
        "x-request-id": requestId,
        traceparent: traceParentOf(trace.span),
        // The client's vendor state belongs to the client's trace: passed on only when that trace goes on.
        ...(trace.continued && typeof request.headers.tracestate === "string" ? { tracestate: request.headers.tracestate } : {})
      },
      target: response,
      answerHeaders
    }, (failure) =>
      writeProblem(response, errorsUrl, failure.errorCode, failure.detail, path, {
        ...answerHeaders,
        ...rejectionHeaders(failure, verdict.window, verdict.decidedAtMs)
      }))
  }

  const requestIdFor = (request: http.IncomingMessage) => requestIdOf(request.headers["x-request-id"] as string | undefined, randomUUID)
  const clientIpOf = (request: http.IncomingMessage) =>
    clientAddress(request.socket.remoteAddress, request.headers["x-forwarded-for"] as string | undefined, config.trustedProxyHops)

  const proxy = (request: http.IncomingMessage, response: http.ServerResponse, path: string, search: string): void => {
    const method = request.method ?? "GET"
    const requestId = requestIdFor(request)
    const clientIp = clientIpOf(request)
    const trace = startSpan(request, response, method, path, clientIp)
    const admission = Effect.withParentSpan(
      admitRequest(routes, PublicApiPrefix, { method, path, authorization: request.headers.authorization, clientIp }),
      trace.span
    )
    runCallback(admission, {
      onExit: (exit) => {
        if (Exit.isFailure(exit)) {
          if (Cause.isInterruptedOnly(exit.cause)) return void response.destroy()
          return internalError(response, path, { "x-request-id": requestId }, clientIp, undefined, exit.cause, trace.span)
        }
        try {
          proceed(request, response, path, search, method, requestId, clientIp, exit.value, trace)
        } catch (defect) {
          internalError(response, path, { "x-request-id": requestId }, clientIp, exit.value.window, Cause.die(defect), trace.span)
        }
      }
    })
  }

  /**
   * A request whose target is neither a path nor an http(s) URL: 400, counted against the client
   * address like every call without a valid token (429 once the address is over its limit).
   * `instance` repeats the target as sent, there being no path to name.
   */
  const refuseTarget = (request: http.IncomingMessage, response: http.ServerResponse): void => {
    const requestId = requestIdFor(request)
    const clientIp = clientIpOf(request)
    const instance = request.url ?? ""
    runCallback(countRequest({ clientIp }), {
      onExit: (exit) => {
        if (Exit.isFailure(exit)) {
          if (Cause.isInterruptedOnly(exit.cause)) return void response.destroy()
          return internalError(response, instance, { "x-request-id": requestId }, clientIp, undefined, exit.cause)
        }
        const counted = exit.value
        const answerHeaders = { ...rateLimitHeaders(counted.state), "x-request-id": requestId }
        if (!counted.state.allowed) {
          const error = rateLimitedError(counted, { clientIp })
          return writeProblem(response, errorsUrl, error.errorCode, error.detail, instance, {
            ...answerHeaders,
            ...rejectionHeaders(error, counted.state, counted.nowMs)
          })
        }
        writeProblem(response, errorsUrl, "INVALID_REQUEST", "The request target is neither a path nor an http or https URL.", instance, answerHeaders)
      }
    })
  }

  /** The last resort of the request listener: whatever threw is logged and answered 500, never left to end the process. */
  const failed = (request: http.IncomingMessage, response: http.ServerResponse, defect: unknown): void => {
    internalError(response, request.url ?? "", { "x-request-id": requestIdFor(request) }, clientIpOf(request), undefined, Cause.die(defect))
  }

  return { proxy, refuseTarget, failed }
})
