import { NodeHttpServer } from "@effect/platform-node"
import { PublicApiPrefix } from "@portfolio/domain"
import { ErrorsUrl, type HttpLimits, httpLimitsConfig, LimitedServer, type ListenSettings, listenSettings, pathRefusal } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import type http from "node:http"
import type { AddressInfo } from "node:net"
import { isUnder, parseRequestTarget } from "./ClientRequest.js"
import { isDocumentationRequest } from "./DocsPages.js"
import { makeProxyHandler } from "./ProxyHandler.js"
import { makePublicApp } from "./PublicApp.js"

/**
 * The public port: one node server whose handler takes the proxied calls itself (the hot path,
 * where per-request fibers and response models would cost more than the proxying) and hands
 * everything else (documentation pages, paths outside the API) to the Effect HttpApp. No probe
 * answers here: `/healthz` and `/readyz` are on the admin port, so that nobody outside can make
 * the gateway query its database without a token. The server is the platform's (`LimitedServer`):
 * its timeouts, connection bound and problem+json answers to what cannot be read as a request.
 * Listens while the scope is open; closing it stops accepting, lets in-flight requests finish
 * within a grace period, then destroys what is left.
 */
export const servePublic = (listen: ListenSettings, limits: HttpLimits) =>
  Effect.gen(function*() {
    const { failed, proxy, refuseTarget } = yield* makeProxyHandler
    const others = yield* NodeHttpServer.makeHandler(yield* makePublicApp)
    const route = (request: http.IncomingMessage, response: http.ServerResponse) => {
      const target = parseRequestTarget(request.url)
      if (target === undefined) return refuseTarget(request, response)
      const refusal = pathRefusal(target.path)
      if (refusal !== undefined) return refuseTarget(request, response, { detail: refusal, instance: target.path })
      if (isUnder(target.path, PublicApiPrefix) && !isDocumentationRequest(request.method ?? "GET", target.path)) proxy(request, response, target)
      else others(request, response)
    }
    // A throw escaping a node request listener ends the process: whatever the client sent, it must not get there.
    const server = new LimitedServer(limits, yield* ErrorsUrl, (request, response) => {
      try {
        route(request, response)
      } catch (defect) {
        try {
          failed(request, response, defect)
        } catch {
          response.destroy()
        }
      }
    })
    return yield* Effect.acquireRelease(
      Effect.async<AddressInfo, Error>((resume) => {
        const onError = (error: Error) => resume(Effect.fail(error))
        server.once("error", onError)
        server.listen(listen.port, listen.host, () => {
          server.off("error", onError)
          resume(Effect.succeed(server.address() as AddressInfo))
        })
      }),
      () => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
    )
  })

/** The public server on PORT / HOST, with the limits of HTTP_* and MAX_CONNECTIONS_PER_CLIENT. */
export const publicServer = Layer.scopedDiscard(
  Effect.flatMap(Effect.all([listenSettings("gateway", "api"), httpLimitsConfig]), ([listen, limits]) => servePublic(listen, limits))
)
