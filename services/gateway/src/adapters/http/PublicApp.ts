import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { type ErrorCode, PublicApiPrefix } from "@portfolio/domain"
import type { WindowState } from "../../domain/rate-limit/RateLimitWindow.js"
import { CurrentExchange, ErrorsUrl } from "@portfolio/platform/http"
import { Cause, Effect, Option } from "effect"
import { rateLimitHeaders } from "../../domain/rate-limit/RateLimitWindow.js"
import { GatewaySettings } from "../../Config.js"
import { countRequest, rateLimitedError } from "../../usecases/rate-limit/RateLimiting.js"
import { clientAddressOf, isUnder, parseRequestTarget, requestIdOf } from "./ClientRequest.js"
import { makeDocsPages } from "./DocsPages.js"
import { isOAuthRequest, makeOAuthEndpoints } from "./OAuthEndpoints.js"
import { refusalResponse } from "./Refusals.js"
import { rejectionHeaders } from "./RejectionHeaders.js"

/**
 * What the public port answers besides the proxied calls: the documentation pages, the OAuth
 * token endpoint and key set, and the 404 of paths outside the API, all counted against the
 * client address. Every answer carries the
 * rate-limit headers and a request id; every error is the gateway's refusal (Refusals.ts).
 */
export const makePublicApp = Effect.gen(function*() {
  const config = yield* GatewaySettings
  const errorsUrl = yield* ErrorsUrl
  const docs = yield* makeDocsPages
  const oauth = yield* makeOAuthEndpoints

  const problem = (code: ErrorCode, detail: string, instance: string) => refusalResponse(errorsUrl, code, detail, instance)

  /** The window a request was counted in, kept aside so that even an unexpected failure reports it. */
  interface Counting {
    readonly clientIp: string
    window: WindowState | undefined
  }

  /** The same reading of the target as the public server's, which sends no malformed target here. */
  const pathOf = (request: HttpServerRequest.HttpServerRequest) => parseRequestTarget(request.url)?.path ?? request.url

  const handle = (request: HttpServerRequest.HttpServerRequest, counting: Counting) =>
    Effect.gen(function*() {
      const path = pathOf(request)
      const counted = yield* countRequest({ clientIp: counting.clientIp })
      counting.window = counted.state
      if (!counted.state.allowed) {
        const error = rateLimitedError(counted, { clientIp: counting.clientIp })
        return refusalResponse(errorsUrl, error.errorCode, error.detail, path, rejectionHeaders(error, counted.state, counted.nowMs))
      }
      if (!isUnder(path, PublicApiPrefix)) {
        return problem("NOT_FOUND", `${path} is not part of the public API, which lives under ${PublicApiPrefix}.`, path)
      }
      if (isOAuthRequest(request.method, path)) return yield* oauth(request, path)
      // Only documentation requests reach here from under the prefix otherwise; `null` is an unknown error slug.
      const page = docs.find(path.slice(PublicApiPrefix.length), request.headers["accept-encoding"])
      return page === null || page === undefined ? problem("NOT_FOUND", "No error page has this name.", path) : yield* page
    })

  /** A bare 500 that names nothing internal; still counted, so it carries the rate-limit headers too. */
  const internalError = (request: HttpServerRequest.HttpServerRequest, counting: Counting, cause: Cause.Cause<unknown>) =>
    Effect.gen(function*() {
      yield* Effect.logError("public request failed", cause)
      if (counting.window === undefined) counting.window = (yield* countRequest({ clientIp: counting.clientIp })).state
      return problem("INTERNAL", "An internal error occurred. It has been logged.", pathOf(request))
    })

  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = requestIdOf(request)
    // The request's record names the id it is answered with, generated here when the client sent none.
    const exchange = yield* Effect.serviceOption(CurrentExchange)
    if (Option.isSome(exchange)) exchange.value.requestId = requestId
    const counting: Counting = { clientIp: clientAddressOf(request, config.trustedProxyHops), window: undefined }
    const response = yield* handle(request, counting).pipe(
      Effect.catchCause((cause) => (Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : internalError(request, counting, cause)))
    )
    return HttpServerResponse.setHeaders(response, {
      ...(counting.window === undefined ? {} : rateLimitHeaders(counting.window)),
      "x-request-id": requestId
    })
  })
})
