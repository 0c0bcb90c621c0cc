import { type ApiError, PayloadTooLarge } from "@portfolio/domain"
import { declaredSizeRefusal } from "@portfolio/platform/http"
import { signAssertion } from "@portfolio/platform/security"
import { traceContextHeadersOf } from "@portfolio/platform/telemetry"
import { type Cause, Effect, Result, Exit, type Tracer } from "effect"
import type http from "node:http"
import { rateLimitHeaders } from "../../domain/rate-limit/RateLimitWindow.js"
import type { WindowState } from "../../domain/rate-limit/RateLimitWindow.js"
import { type Admitted, type Credential, credentialAttribute, type Verdict } from "../../usecases/AdmitRequest.js"
import { countRequest } from "../../usecases/rate-limit/RateLimiting.js"
import type { HotPath, ProxiedCall } from "./ProxiedCall.js"
import { writeRefusal } from "./Refusals.js"
import { rejectionHeaders } from "./RejectionHeaders.js"

const tenantOf = (credential: Credential): string => {
  switch (credential._tag) {
    case "Pat":
      return credential.pat.tenantId
    case "Partner":
      return credential.access.tenantId
    case "Scim":
      return credential.token.tenantId
  }
}

/** The headers of every answer to a decided call: its window and its request id. */
const answerHeadersOf = (call: ProxiedCall, verdict: Verdict) => ({ ...rateLimitHeaders(verdict.window), "x-request-id": call.requestId })

/** The gateway's own refusal of a call (problem+json, or a SCIM error under the SCIM prefix), before or after trying the upstream. */
const refuse = (hot: HotPath, call: ProxiedCall, verdict: Verdict, error: ApiError): void =>
  writeRefusal(call.response, hot.errorsUrl, error.errorCode, error.detail, call.path, {
    ...answerHeadersOf(call, verdict),
    ...rejectionHeaders(error, verdict.window, verdict.decidedAtMs)
  })

/**
 * Sends an admitted call to its upstream, as the caller the admission named, and streams the
 * answer back. The assertion names the upstream and exactly the target and body sent there.
 */
const forward = (hot: HotPath, call: ProxiedCall, verdict: Verdict, admitted: Admitted): void => {
  const { method, request } = call
  const upstream = admitted.route.upstream
  const target = `${call.path}${call.search}`
  hot.forwarder.forward({
    upstream,
    method,
    pathAndQuery: target,
    source: request,
    assertion: (body) => signAssertion(hot.secret, admitted.caller, { audience: upstream, method, target, body }),
    headers: {
      "x-forwarded-for": call.clientIp,
      "x-request-id": call.requestId,
      ...traceContextHeadersOf(call.span),
      // The client's vendor state belongs to the client's trace: passed on only when that trace goes on.
      ...(call.traceContinued && typeof request.headers.tracestate === "string" ? { tracestate: request.headers.tracestate } : {})
    },
    target: call.response,
    answerHeaders: answerHeadersOf(call, verdict)
  }, (failure) => refuse(hot, call, verdict, failure))
}

/**
 * Answers what the admission decided: the gateway's own refusal, or the upstream's answer
 * streamed through. The span and the call's log line name the token's tenant and prefix (a
 * partner's client id) once it is authenticated.
 */
export const answerVerdict = (hot: HotPath, call: ProxiedCall, verdict: Verdict): void => {
  const { credential } = verdict
  if (credential !== undefined) {
    const tenantId = tenantOf(credential)
    // A client id is no secret: the request's record names it where a token's would show its prefix.
    const [name, shown] = credentialAttribute(credential)
    call.span.attribute("tenant.id", tenantId)
    call.span.attribute(name, shown)
    call.exchange.tenant = tenantId
    call.exchange.tokenPrefix = shown
  }
  const { outcome } = verdict
  if (Result.isFailure(outcome)) return refuse(hot, call, verdict, outcome.failure)
  const tooLarge = declaredSizeRefusal(call.request.headers)
  if (tooLarge !== undefined) return refuse(hot, call, verdict, new PayloadTooLarge({ detail: tooLarge.detail }))
  // The client left while the gateway was deciding: nobody would read the upstream's answer.
  if (call.request.socket.destroyed) return
  forward(hot, call, verdict, outcome.success)
}

/** A request the gateway failed on unexpectedly, at whatever stage it was: what its 500 needs. */
export interface FailedRequest {
  readonly response: http.ServerResponse
  /** The problem's `instance`: the path, or the target as sent when there is no path. */
  readonly instance: string
  readonly requestId: string
  readonly clientIp: string
  /** The window the request was already counted in, if it got that far: it is not counted twice. */
  readonly window: WindowState | undefined
  /** The request's server span, if it has one: the error is logged inside it. */
  readonly span: Tracer.Span | undefined
}

/**
 * Logs the cause and answers a bare 500 that names nothing internal, counted once: by the
 * admission's window, else by client address. A response already under way can only be cut.
 */
export const answerInternalError = (hot: HotPath, failed: FailedRequest, cause: Cause.Cause<unknown>): void => {
  const { window } = failed
  const counted = Effect.andThen(
    Effect.logError("public request failed", cause),
    window === undefined ? Effect.map(countRequest({ clientIp: failed.clientIp }), (counted) => counted.state) : Effect.succeed(window)
  )
  hot.run(failed.span === undefined ? counted : Effect.withParentSpan(counted, failed.span), {
    onExit: (exit) => {
      if (failed.response.headersSent) return void failed.response.destroy()
      const headers = { ...(Exit.isSuccess(exit) ? rateLimitHeaders(exit.value) : {}), "x-request-id": failed.requestId }
      writeRefusal(failed.response, hot.errorsUrl, "INTERNAL", "An internal error occurred. It has been logged.", failed.instance, headers)
    }
  })
}
