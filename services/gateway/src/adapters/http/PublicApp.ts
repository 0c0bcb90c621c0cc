import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { type ErrorCode, PublicApi, PublicApiPrefix } from "@portfolio/domain"
import type { WindowState } from "@portfolio/domain/ports/gateway/RateLimitStore"
import { AssertionHeader, ErrorsUrl, InternalSecret, problemResponse, signAssertion } from "@portfolio/platform"
import { Cause, Effect, Either, Option } from "effect"
import { randomUUID } from "node:crypto"
import { rateLimitHeaders, retryAfterSeconds } from "../../core/RateLimitHeaders.js"
import { routeTableFrom } from "../../core/RouteTable.js"
import { GatewayConfig } from "../../GatewayConfig.js"
import { admitRequest, type Rejection } from "../../usecases/AdmitRequest.js"
import { countRequest, rateLimitedError } from "../../usecases/RateLimiting.js"
import { makeDocsPages } from "./DocsPages.js"
import { MaxBodyBytes, UpstreamForwarder } from "./UpstreamForwarder.js"

const requestIdShape = /^[A-Za-z0-9._:-]{1,128}$/

/** Seconds a client should wait after a 503 before retrying. */
const UnavailableRetryAfter = "5"

const isUnder = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`)

/**
 * The client's address: the socket's peer, or, behind `hops` trusted reverse proxies, the entry
 * of X-Forwarded-For that the outermost trusted proxy appended.
 */
const clientAddress = (request: HttpServerRequest.HttpServerRequest, hops: number): string => {
  const peer = Option.getOrElse(request.remoteAddress, () => "unknown")
  if (hops === 0) return peer
  const forwarded = (request.headers["x-forwarded-for"] ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  return forwarded[forwarded.length - hops] ?? peer
}

/**
 * The public entry of the platform: a reverse proxy whose allow-list, scopes, roles and upstreams
 * come from the PublicApi contract. Every answer under /api carries the rate-limit headers and a
 * request id; every error the gateway itself produces is problem+json.
 */
export const makePublicApp = Effect.gen(function*() {
  const config = yield* GatewayConfig
  const errorsUrl = yield* ErrorsUrl
  const secret = yield* InternalSecret
  const forwarder = yield* UpstreamForwarder
  const docs = yield* makeDocsPages
  const routes = routeTableFrom(PublicApi)

  const problem = (code: ErrorCode, detail: string, instance: string, headers: Record<string, string> = {}) =>
    problemResponse(errorsUrl, code, detail, instance, headers)

  const rejection = (error: Rejection, instance: string, window: WindowState, nowMs: number) => {
    switch (error._tag) {
      case "RateLimited":
        return problem(error.errorCode, error.detail, instance, { "retry-after": String(retryAfterSeconds(window, nowMs)) })
      case "Unauthenticated":
        return problem(error.errorCode, error.detail, instance, { "www-authenticate": "Bearer realm=\"api\"" })
      case "Unavailable":
        return problem(error.errorCode, error.detail, instance, { "retry-after": UnavailableRetryAfter })
      default:
        return problem(error.errorCode, error.detail, instance)
    }
  }

  /** The window a request was counted in, kept aside so that even an unexpected failure reports it. */
  interface Counting {
    window: WindowState | undefined
  }

  /** Pages and unknown paths outside the contract, counted against the client address. */
  const anonymous = <R>(
    counting: Counting,
    clientIp: string,
    path: string,
    answer: Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>
  ) =>
    Effect.gen(function*() {
      const counted = yield* countRequest({ clientIp })
      counting.window = counted.state
      return counted.state.allowed
        ? yield* answer
        : rejection(rateLimitedError(counted, { clientIp }), path, counted.state, counted.nowMs)
    })

  const handle = (request: HttpServerRequest.HttpServerRequest, requestId: string, counting: Counting) =>
    Effect.gen(function*() {
      const url = new URL(request.url, "http://gateway.invalid")
      const path = url.pathname
      const clientIp = clientAddress(request, config.trustedProxyHops)

      if (!isUnder(path, PublicApiPrefix)) {
        return yield* anonymous(
          counting,
          clientIp,
          path,
          Effect.succeed(problem("NOT_FOUND", `${path} is not part of the public API, which lives under ${PublicApiPrefix}.`, path))
        )
      }
      if (request.method === "GET") {
        const page = docs.find(path.slice(PublicApiPrefix.length))
        if (page === null) return yield* anonymous(counting, clientIp, path, Effect.succeed(problem("NOT_FOUND", "No error page has this name.", path)))
        if (page !== undefined) return yield* anonymous(counting, clientIp, path, page)
      }

      const verdict = yield* admitRequest(routes, PublicApiPrefix, {
        method: request.method,
        path,
        authorization: request.headers["authorization"],
        clientIp
      })
      counting.window = verdict.window
      if (Either.isLeft(verdict.outcome)) return rejection(verdict.outcome.left, path, verdict.window, verdict.decidedAtMs)
      const { caller, pat, route } = verdict.outcome.right
      if (Number(request.headers["content-length"] ?? "0") > MaxBodyBytes) {
        return problem("PAYLOAD_TOO_LARGE", `The request body exceeds ${MaxBodyBytes} bytes.`, path, { connection: "close" })
      }
      return yield* forwarder.forward({
        upstream: route.upstream,
        method: request.method,
        pathAndQuery: `${path}${url.search}`,
        source: NodeHttpServerRequest.toIncomingMessage(request),
        headers: {
          [AssertionHeader]: signAssertion(secret, caller, { method: request.method, path }),
          "x-forwarded-for": clientIp,
          "x-request-id": requestId
        }
      }).pipe(
        Effect.catchTags({
          PayloadTooLarge: (error) => Effect.succeed(problem(error.errorCode, error.detail, path, { connection: "close" })),
          Unavailable: (error) => Effect.succeed(rejection(error, path, verdict.window, verdict.decidedAtMs))
        }),
        Effect.annotateSpans({ "pat.prefix": pat.tokenPrefix, "http.route": route.pattern })
      )
    })

  /** A bare 500 that names nothing internal; still counted, so it carries the rate-limit headers too. */
  const internalError = (request: HttpServerRequest.HttpServerRequest, counting: Counting, cause: Cause.Cause<unknown>) =>
    Effect.gen(function*() {
      yield* Effect.logError("public request failed", cause)
      if (counting.window === undefined) {
        counting.window = (yield* countRequest({ clientIp: clientAddress(request, config.trustedProxyHops) })).state
      }
      const path = new URL(request.url, "http://gateway.invalid").pathname
      return problem("INTERNAL", "An internal error occurred. It has been logged.", path)
    })

  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const incomingId = request.headers["x-request-id"]
    const requestId = incomingId !== undefined && requestIdShape.test(incomingId) ? incomingId : randomUUID()
    const counting: Counting = { window: undefined }
    const response = yield* handle(request, requestId, counting).pipe(
      Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : internalError(request, counting, cause)))
    )
    return HttpServerResponse.setHeaders(response, {
      ...(counting.window === undefined ? {} : rateLimitHeaders(counting.window)),
      "x-request-id": requestId
    })
  })
})
