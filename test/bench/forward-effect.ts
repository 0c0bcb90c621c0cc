import { HttpClient, HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"

/**
 * The same proxy on Effect alone: an Effect HTTP server whose one route sends the request on with
 * Effect's HttpClient over undici (NodeHttpClient.layerUndici) and answers its body as a stream.
 * What the gateway's forwarding would cost as one Effect path. Prints its port once listening;
 * arguments: the upstream's origin, then `untraced` for neither server nor client spans (the
 * gateway makes its own).
 */
const origin = process.argv[2]!
const untraced = process.argv[3] === "untraced"
const Forward = HttpRouter.add("GET", "*", Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const client = yield* HttpClient.HttpClient
  const answer = yield* client.get(`${origin}${request.url}`)
  return HttpServerResponse.stream(answer.stream, { status: answer.status, contentType: answer.headers["content-type"] ?? "application/json" })
}).pipe(Effect.catch(() => Effect.succeed(HttpServerResponse.empty({ status: 503 })))))

const server = createServer()
const Main = HttpRouter.serve(Forward, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(untraced ? Layer.mergeAll(Layer.succeed(HttpClient.TracerDisabledWhen, () => true), Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)) : Layer.empty),
  Layer.provide(NodeHttpClient.layerUndici),
  Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" })),
  Layer.tap(() => Effect.sync(() => {
    const address = server.address()
    console.log(typeof address === "object" && address !== null ? address.port : "")
  }))
)
NodeRuntime.runMain(Layer.launch(Main))
