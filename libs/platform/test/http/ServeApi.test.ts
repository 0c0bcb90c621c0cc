import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Logger, LogLevel, Schema } from "effect"
import net from "node:net"
import { ErrorsUrl } from "../../src/ProblemResponse.js"
import { serveApi } from "../../src/Server.js"
import { exchange, RawConnection } from "../../testing/RawConnection.js"

const Api = HttpApi.make("edge").add(
  HttpApiGroup.make("edge").add(HttpApiEndpoint.get("read", "/things/:id").setPath(Schema.Struct({ id: Schema.String })).addSuccess(Schema.Struct({ id: Schema.String })))
)

const EdgeLive = HttpApiBuilder.group(Api, "edge", (handlers) => handlers.handle("read", ({ path }) => Effect.succeed({ id: path.id })))

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

const port = await freePort()

/** A service's port as `serveApi` serves it, configured as a deployment would be, with short timeouts. */
const Served = serveApi({ apiLayer: HttpApiBuilder.api(Api).pipe(Layer.provide(EdgeLive)), ready: Effect.void, service: "referential", server: "api" }).pipe(
  Layer.provide(Layer.succeed(ErrorsUrl, "https://errors.example.test/api")),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(
    new Map([
      ["PORT", String(port)],
      ["HOST", "127.0.0.1"],
      ["HTTP_HEADERS_TIMEOUT", "300 millis"],
      ["HTTP_REQUEST_TIMEOUT", "600 millis"]
    ])
  ))),
  Layer.provide(Logger.minimumLogLevel(LogLevel.None))
)

describe("serveApi's server", () => {
  layer(Served, { timeout: 30_000 })((it) => {
    it.effect("answers HEAD on a GET endpoint like GET, without the body", () =>
      Effect.promise(async () => {
        const get = await exchange(port, "GET /things/abc HTTP/1.1\r\nHost: x\r\n\r\n")
        const head = await exchange(port, "HEAD /things/abc HTTP/1.1\r\nHost: x\r\n\r\n", { head: true })
        expect(get).toMatchObject({ status: 200, body: "{\"id\":\"abc\"}" })
        expect(head).toEqual({ status: 200, headers: { ...get.headers, date: head.headers["date"] }, body: "" })
      }))

    it.effect("applies the configured limits: a slow client gets a 408 problem", () =>
      Effect.promise(async () => {
        const slowloris = await RawConnection.open(port)
        slowloris.send("GET /things/abc HTTP/1.1\r\nHost: x\r\n")
        void slowloris.trickle("X-Slow: 1\r\n", 50)
        const answer = await slowloris.next()
        expect({ status: answer.status, type: answer.headers["content-type"] }).toEqual({ status: 408, type: "application/problem+json" })
        expect(JSON.parse(answer.body)).toMatchObject({ errorCode: "REQUEST_TIMEOUT", type: "https://errors.example.test/api/request-timeout" })
      }))

    it.effect("answers the probes", () =>
      Effect.promise(async () => {
        expect((await exchange(port, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")).status).toBe(200)
        expect((await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")).status).toBe(200)
      }))
  })
})
