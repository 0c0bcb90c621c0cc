import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, References, Schema } from "effect"
import net from "node:net"
import { MetricsLive } from "../../src/telemetry/Metrics.js"
import { ErrorsUrl } from "../../src/http/ProblemResponse.js"
import { serveApi } from "../../src/http/Server.js"
import { parsePrometheusText, samplesOf } from "../../testing/PrometheusText.js"
import { exchange, RawConnection } from "../../testing/RawConnection.js"

const Api = HttpApi.make("edge").add(
  HttpApiGroup.make("edge").add(HttpApiEndpoint.get("read", "/things/:id", { params: { id: Schema.String }, success: Schema.Struct({ id: Schema.String }) }))
)

const EdgeLive = HttpApiBuilder.group(Api, "edge", (handlers) => handlers.handle("read", ({ params }) => Effect.succeed({ id: params.id })))

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

const port = await freePort()
const adminPort = await freePort()

const settings = ConfigProvider.layer(ConfigProvider.fromUnknown({
  PORT: String(port),
  ADMIN_PORT: String(adminPort),
  HOST: "127.0.0.1",
  HTTP_HEADERS_TIMEOUT: "300 millis",
  HTTP_REQUEST_TIMEOUT: "600 millis"
}))

const served = (server: "api" | "admin") =>
  serveApi({ api: Api, apiLayer: HttpApiBuilder.layer(Api).pipe(Layer.provide(EdgeLive)), ready: Effect.void, service: "referential", server })

/** A service's two ports as `serveApi` serves them, configured as a deployment would be, with short timeouts, sharing its metrics. */
const Served = Layer.mergeAll(served("api"), served("admin")).pipe(
  Layer.provide(MetricsLive("referential")),
  Layer.provide(Layer.succeed(ErrorsUrl, "https://errors.example.test/api")),
  Layer.provide(settings),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
)

const scrape = async () => {
  const answer = await exchange(adminPort, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
  return { ...answer, families: parsePrometheusText(answer.body) }
}

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

    it.effect("serves /metrics on the admin port only, and records every request but the probes and the scrapes by route template", () =>
      Effect.promise(async () => {
        const duration = "http_server_request_duration_seconds_count"
        const before = (await scrape()).families
        const counted = (families: typeof before, labels: Record<string, string>) => samplesOf(families, duration, labels)[0]?.value ?? 0
        const things = { http_request_method: "GET", http_route: "/things/{id}", http_response_status_code: "200" }
        const unmatched = { http_request_method: "GET", http_response_status_code: "404" }

        expect((await exchange(port, "GET /things/a HTTP/1.1\r\nHost: x\r\n\r\n")).status).toBe(200)
        expect((await exchange(port, "GET /things/b?q=secret HTTP/1.1\r\nHost: x\r\n\r\n")).status).toBe(200)
        expect((await exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")).status).toBe(404)
        await exchange(port, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        await exchange(adminPort, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        await scrape()

        const after = await scrape()
        expect(after.status).toBe(200)
        expect(after.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8")
        expect(counted(after.families, things) - counted(before, things)).toBe(2)
        // The public port's 404 for /metrics is a request like any other; nothing counts the probes or the scrapes.
        expect(counted(after.families, unmatched) - counted(before, unmatched)).toBe(1)
        expect(samplesOf(after.families, duration).reduce((n, s) => n + s.value, 0) - samplesOf(before, duration).reduce((n, s) => n + s.value, 0)).toBe(3)
        expect(after.body).not.toContain("secret")
        expect(samplesOf(after.families, "target_info")[0]!.labels["service_name"]).toBe("referential")
      }))
  })
})
