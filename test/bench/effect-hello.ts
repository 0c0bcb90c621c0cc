import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpMiddleware } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"

/**
 * The framework's ceiling: an Effect HttpApi server with one endpoint answering a schema-encoded
 * body of about 750 bytes, no work behind it. What any HttpApi request costs before the service
 * does anything. Prints its port once listening.
 */
const Hello = Schema.Struct({ code: Schema.String, name: Schema.String, description: Schema.String, revision: Schema.Number })
const Api = HttpApi.make("hello").add(HttpApiGroup.make("hello").add(HttpApiEndpoint.get("hello", "/api/v1/referentiel/applications/:code").addSuccess(Hello)))
const answer = { code: "APP-1", name: "Hello", description: "x".repeat(680), revision: 1 }
const HelloLive = HttpApiBuilder.group(Api, "hello", (handlers) => handlers.handle("hello", () => Effect.succeed(answer)))

const server = createServer()
const Main = HttpApiBuilder.serve(HttpMiddleware.make((app) => app)).pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(HelloLive))),
  Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" })),
  Layer.tap(() => Effect.sync(() => {
    const address = server.address()
    console.log(typeof address === "object" && address !== null ? address.port : "")
  }))
)
NodeRuntime.runMain(Layer.launch(Main))
