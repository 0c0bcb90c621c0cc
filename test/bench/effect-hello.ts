import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { HttpRouter } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"

/**
 * The framework's ceiling: an Effect HttpApi server with one endpoint answering a schema-encoded
 * body of about 750 bytes, no work behind it. What any HttpApi request costs before the service
 * does anything. Prints its port once listening.
 */
const Hello = Schema.Struct({ code: Schema.String, name: Schema.String, description: Schema.String, revision: Schema.Number })
const Api = HttpApi.make("hello").add(HttpApiGroup.make("hello").add(HttpApiEndpoint.get("hello", "/api/v1/referentiel/applications/:code", { success: Hello })))
const answer = { code: "APP-1", name: "Hello", description: "x".repeat(680), revision: 1 }
const HelloLive = HttpApiBuilder.group(Api, "hello", (handlers) => handlers.handle("hello", () => Effect.succeed(answer)))

const server = createServer()
// Without the per-response log line, as before (the identity middleware replaced the logger).
const Main = HttpRouter.serve(HttpApiBuilder.layer(Api).pipe(Layer.provide(HelloLive)), { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" })),
  Layer.tap(() => Effect.sync(() => {
    const address = server.address()
    console.log(typeof address === "object" && address !== null ? address.port : "")
  }))
)
NodeRuntime.runMain(Layer.launch(Main))
