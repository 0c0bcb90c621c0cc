import { NodeHttpServer } from "@effect/platform-node"
import { PublicApiPrefix } from "@portfolio/domain"
import { type ListenSettings, listenSettings, probes } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { isUnder, parseRequestTarget } from "./ClientRequest.js"
import { isDocumentationRequest } from "./DocsPages.js"
import { makeProxyHandler } from "./ProxyHandler.js"
import { makePublicApp } from "./PublicApp.js"

/** How long in-flight requests may run once the server is asked to stop, before their sockets are cut. */
const ShutdownGraceMs = 10_000

/**
 * The public port: one node server whose handler takes the proxied calls itself (the hot path,
 * where per-request fibers and response models would cost more than the proxying) and hands
 * everything else (probes, documentation pages, paths outside the API) to the Effect HttpApp.
 * Listens while the scope is open; closing it stops accepting, lets in-flight requests finish
 * within a grace period, then destroys what is left.
 */
export const servePublic = <E, R>(ready: Effect.Effect<unknown, E, R>, listen: ListenSettings) =>
  Effect.gen(function*() {
    const { failed, proxy, refuseTarget } = yield* makeProxyHandler
    const app = yield* makePublicApp
    const others = yield* NodeHttpServer.makeHandler(probes(ready)(app))
    const route = (request: http.IncomingMessage, response: http.ServerResponse) => {
      const target = parseRequestTarget(request.url)
      if (target === undefined) return refuseTarget(request, response)
      if (isUnder(target.path, PublicApiPrefix) && !isDocumentationRequest(request.method ?? "GET", target.path)) proxy(request, response, target)
      else others(request, response)
    }
    // A throw escaping a node request listener ends the process: whatever the client sent, it must not get there.
    const server = http.createServer((request, response) => {
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
      () =>
        Effect.async<void>((resume) => {
          // Connections that turn idle after close() would otherwise wait for their keep-alive timeout.
          const idle = setInterval(() => server.closeIdleConnections(), 50)
          const cut = setTimeout(() => server.closeAllConnections(), ShutdownGraceMs)
          server.close(() => {
            clearInterval(idle)
            clearTimeout(cut)
            resume(Effect.void)
          })
          server.closeIdleConnections()
        })
    )
  })

/** The public server on PORT / HOST. */
export const publicServer = <E, R>(ready: Effect.Effect<unknown, E, R>) =>
  Layer.scopedDiscard(
    Effect.flatMap(listenSettings("gateway", "api"), (listen) => servePublic(ready, listen))
  )
