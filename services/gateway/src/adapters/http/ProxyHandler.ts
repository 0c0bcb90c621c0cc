import { PublicApi } from "@portfolio/domain"
import { ErrorsUrl, type Exchange } from "@portfolio/platform/http"
import { InternalSecret } from "@portfolio/platform/security"
import { Cause, Clock, Effect, Exit } from "effect"
import type http from "node:http"
import { allowListOf } from "../../domain/AllowList.js"
import { rateLimitHeaders } from "../../domain/rate-limit/RateLimitWindow.js"
import { GatewaySettings } from "../../Config.js"
import { admitRequest, type Verdict } from "../../usecases/AdmitRequest.js"
import { countRequest, rateLimitedError } from "../../usecases/rate-limit/RateLimiting.js"
import { clientAddressOf, type RequestTarget, requestIdOf } from "./ClientRequest.js"
import type { WindowState } from "../../domain/rate-limit/RateLimitWindow.js"
import { type AdmissionContext, type HotPath, openCall, type ProxiedCall } from "./ProxiedCall.js"
import { answerInternalError, answerVerdict, type FailedRequest } from "./ProxyAnswers.js"
import { writeRefusal } from "./Refusals.js"
import { rejectionHeaders } from "./RejectionHeaders.js"
import { UpstreamForwarder } from "../../ports/UpstreamForwarder.js"

const failedCall = (call: ProxiedCall, window: WindowState | undefined): FailedRequest => ({
  response: call.response,
  instance: call.path,
  requestId: call.requestId,
  clientIp: call.clientIp,
  window,
  span: call.span
})

const answer = (hot: HotPath, call: ProxiedCall, verdict: Verdict): void => {
  try {
    answerVerdict(hot, call, verdict)
  } catch (defect) {
    answerInternalError(hot, failedCall(call, verdict.window), Cause.die(defect))
  }
}

/**
 * A proxied call: admitted inside its server span by the `admitRequest` use case, run on the
 * runtime captured at start, then answered by node code.
 */
const proxy = (hot: HotPath, request: http.IncomingMessage, response: http.ServerResponse, target: RequestTarget, exchange: Exchange): void => {
  const call = openCall(hot, request, response, target, exchange)
  hot.run(Effect.withParentSpan(admitRequest(call), call.span), {
    onExit: (exit) => {
      if (Exit.isFailure(exit)) {
        if (Cause.hasInterruptsOnly(exit.cause)) return void response.destroy()
        return answerInternalError(hot, failedCall(call, undefined), exit.cause)
      }
      answer(hot, call, exit.value)
    }
  })
}

/** Why a request target is refused, and the `instance` of the 400. */
interface TargetRefusal {
  readonly detail: string
  readonly instance: string
}

/**
 * A request whose target is neither a path nor an http(s) URL, or whose path `pathRefusal`
 * refuses: 400, counted against the client address like every call without a valid token (429
 * once the address is over its limit). Without a path, `instance` repeats the target as sent.
 */
const refuseTarget = (hot: HotPath, request: http.IncomingMessage, response: http.ServerResponse, exchange: Exchange, refusal?: TargetRefusal): void => {
  const requestId = requestIdOf(request)
  exchange.requestId = requestId
  const clientIp = clientAddressOf(request, hot.trustedProxyHops)
  const instance = refusal?.instance ?? request.url ?? ""
  hot.run(countRequest({ clientIp }), {
    onExit: (exit) => {
      if (Exit.isFailure(exit)) {
        if (Cause.hasInterruptsOnly(exit.cause)) return void response.destroy()
        return answerInternalError(hot, { response, instance, requestId, clientIp, window: undefined, span: undefined }, exit.cause)
      }
      const counted = exit.value
      const answerHeaders = { ...rateLimitHeaders(counted.state), "x-request-id": requestId }
      if (!counted.state.allowed) {
        const error = rateLimitedError(counted, { clientIp })
        return writeRefusal(response, hot.errorsUrl, error.errorCode, error.detail, instance, {
          ...answerHeaders,
          ...rejectionHeaders(error, counted.state, counted.nowMs)
        })
      }
      const detail = refusal?.detail ?? "The request target is neither a path nor an http or https URL."
      writeRefusal(response, hot.errorsUrl, "INVALID_REQUEST", detail, instance, answerHeaders)
    }
  })
}

/**
 * The hot path of the gateway: every call to the public API (documentation pages aside). The
 * `admitRequest` use case decides; then the answer is either the gateway's own refusal
 * (problem+json, or a SCIM error under the SCIM prefix: Refusals.ts) or the upstream's, streamed
 * through. Every answer carries the rate-limit headers and a request id; an unexpected failure is
 * logged and answered with a bare 500 that names nothing internal.
 */
export const makeProxyHandler = Effect.gen(function*() {
  const hot: HotPath = {
    allowList: allowListOf(PublicApi),
    trustedProxyHops: (yield* GatewaySettings).trustedProxyHops,
    errorsUrl: yield* ErrorsUrl,
    secret: yield* InternalSecret,
    forwarder: yield* UpstreamForwarder,
    tracer: yield* Effect.tracer,
    clock: yield* Clock.Clock,
    run: Effect.runCallbackWith(yield* Effect.context<AdmissionContext>())
  }
  return {
    proxy: (request: http.IncomingMessage, response: http.ServerResponse, target: RequestTarget, exchange: Exchange) =>
      proxy(hot, request, response, target, exchange),
    refuseTarget: (request: http.IncomingMessage, response: http.ServerResponse, exchange: Exchange, refusal?: TargetRefusal) =>
      refuseTarget(hot, request, response, exchange, refusal),
    /**
     * The last resort of the request listener: whatever threw is logged and answered 500, never
     * left to end the process; under the request id its record already has, if it got one.
     */
    failed: (request: http.IncomingMessage, response: http.ServerResponse, exchange: Exchange, defect: unknown) => {
      exchange.requestId ??= requestIdOf(request)
      answerInternalError(hot, {
        response,
        instance: request.url ?? "",
        requestId: exchange.requestId,
        clientIp: clientAddressOf(request, hot.trustedProxyHops),
        window: undefined,
        span: undefined
      }, Cause.die(defect))
    }
  }
})
