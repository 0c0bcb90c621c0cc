import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { PublicApiPrefix } from "@portfolio/domain"
import { ErrorsUrl, type Exchange, type HttpLimits, httpLimitsConfig, LimitedServer, type ListenSettings, listenSettings, makeRequestObserver, observeRequests, pathRefusal } from "@portfolio/platform/http"
import { Effect, Layer, Scope } from "effect"
import type { AddressInfo } from "node:net"
import { isUnder, parseRequestTarget } from "./ClientRequest.js"
import { documentationRoute, isDocumentationRequest } from "./DocsPages.js"
import { isOAuthRequest, oauthRoute } from "./OAuthEndpoints.js"
import { makeProxyHandler } from "./ProxyHandler.js"
import { makePublicApp } from "./PublicApp.js"

/**
 * The public port: one node server whose handler takes the proxied calls itself (the hot path,
 * where per-request fibers and response models would cost more than the proxying) and hands
 * everything else (documentation pages, paths outside the API) to the Effect HttpApp. Every
 * request is recorded (its duration metric and log line, RequestObservation.ts), the gateway's own
 * refusals included. No probe answers here: `/healthz` and `/readyz` are on the admin port, so that
 * nobody outside can make the gateway query its database without a token. The server is the platform's (`LimitedServer`):
 * its timeouts, connection bound and problem+json answers to what cannot be read as a request.
 * Listens while the scope is open; closing it stops accepting, lets in-flight requests finish
 * within a grace period, then destroys what is left.
 */
export const servePublic = (listen: ListenSettings, limits: HttpLimits) =>
  Effect.gen(function*() {
    const { failed, proxy, refuseTarget } = yield* makeProxyHandler
    const observer = yield* makeRequestObserver
    // The app's requests run in a scope of their own, opened before the server's below and so closed
    // after it: on shutdown they finish within the server's grace period rather than being interrupted.
    const requests = yield* Scope.fork(yield* Scope.Scope)
    const others = yield* NodeHttpServer.makeHandler(observeRequests(observer, routeOfOthers)(yield* makePublicApp), { scope: requests })
    // A throw escaping a node request listener ends the process: whatever the client sent, it must not get there.
    const server = new LimitedServer(limits, yield* ErrorsUrl, (request, response) => {
      let exchange: Exchange | undefined
      try {
        const target = parseRequestTarget(request.url)
        const refusal = target === undefined ? undefined : pathRefusal(target.path)
        if (target !== undefined && refusal === undefined && !isProxied(request.method ?? "GET", target.path)) {
          // The app records what it answers itself (observeRequests above).
          return others(request, response)
        }
        exchange = observer.observe(request, response)
        if (target === undefined) refuseTarget(request, response, exchange)
        else if (refusal !== undefined) refuseTarget(request, response, exchange, { detail: refusal, instance: target.path })
        else proxy(request, response, target, exchange)
      } catch (defect) {
        try {
          failed(request, response, exchange ?? observer.observe(request, response), defect)
        } catch {
          response.destroy()
        }
      }
    })
    return yield* Effect.acquireRelease(
      Effect.callback<AddressInfo, Error>((resume) => {
        const onError = (error: Error) => resume(Effect.fail(error))
        server.once("error", onError)
        server.listen(listen.port, listen.host, () => {
          server.off("error", onError)
          resume(Effect.succeed(server.address() as AddressInfo))
        })
      }),
      () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
    )
  })

/** Whether the hot path answers a call: under the public prefix, documentation pages and OAuth endpoints aside. */
const isProxied = (method: string, path: string) =>
  isUnder(path, PublicApiPrefix) && !isDocumentationRequest(method, path) && !isOAuthRequest(method, path)

/** The route template of what the Effect app answers, for its record. */
const routeOfOthers = (request: Parameters<typeof documentationRoute>[0]) => {
  const path = parseRequestTarget(request.url)?.path
  return documentationRoute(request) ?? (path === undefined ? undefined : oauthRoute(request.method, path))
}

/** The public server on PORT / HOST, with the limits of HTTP_* and MAX_CONNECTIONS_PER_CLIENT. */
export const PublicServerLive = Layer.effectDiscard(
  Effect.flatMap(Effect.all([listenSettings("gateway", "api"), httpLimitsConfig]), ([listen, limits]) => servePublic(listen, limits))
)
