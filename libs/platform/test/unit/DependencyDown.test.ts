import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { HttpClient, HttpClientRequest, HttpRouter } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { SqlClient } from "effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { asProblem, Problems, Unavailable } from "@portfolio/domain"
import { ConfigProvider, Effect, Layer, Schema } from "effect"
import net from "node:net"
import { isDependencyDown } from "../../src/http/DependencyDown.js"
import { pgError, PgLive } from "../../src/sql/Database.js"
import { answerProblems, ErrorsUrl, ProblemMiddlewareLive } from "../../src/http/ProblemResponse.js"
import { aroundRouter, probes } from "../../src/http/Server.js"

/**
 * A TCP relay to the test PostgreSQL server that the test can cut and restore, so that the pool
 * meets a real outage: refused connections and connections dropped under it.
 */
const relay = () => {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(5432, "127.0.0.1")
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => socket.destroy())
    }
    client.pipe(upstream).pipe(client)
  })
  let port = 0
  return {
    get port() {
      return port
    },
    open: () => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => {
      port = (server.address() as net.AddressInfo).port
      resolve()
    })),
    cut: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  }
}

const Api = HttpApi.make("probe").add(
  HttpApiGroup.make("probe")
    .add(HttpApiEndpoint.get("select", "/select", { success: Schema.Struct({ one: Schema.Number }) }))
    .add(HttpApiEndpoint.get("broken", "/broken", { success: Schema.Struct({ one: Schema.Number }) }))
    .add(HttpApiEndpoint.get("unavailable", "/unavailable", { success: Schema.Void, error: asProblem(Unavailable) }))
).middleware(Problems)

// Adapters turn unexpected SqlErrors into defects, as these handlers do.
const ProbeLive = HttpApiBuilder.group(Api, "probe", (handlers) =>
  handlers
    .handle("select", () =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ one: number }>`SELECT 1 AS one`).pipe(Effect.map((rows) => rows[0]!), Effect.orDie))
    .handle("broken", () =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ one: number }>`SELEC 1 AS one`).pipe(Effect.map((rows) => rows[0]!), Effect.orDie))
    .handle("unavailable", () => Effect.fail(new Unavailable({ detail: "The mail server did not answer." }))))

const database = relay()

const get = (path: string) =>
  Effect.gen(function*() {
    const response = yield* HttpClient.execute(HttpClientRequest.get(path))
    return { status: response.status, retryAfter: response.headers["retry-after"], body: yield* response.json }
  })

const Served = Layer.unwrap(Effect.promise(() => database.open()).pipe(Effect.map(() =>
  HttpRouter.serve(
    Layer.mergeAll(
      HttpApiBuilder.layer(Api).pipe(Layer.provide(ProbeLive), Layer.provide(ProblemMiddlewareLive)),
      aroundRouter((app) => probes(Effect.void)(answerProblems(app)))
    ),
    { disableLogger: true, disableListenLog: true }
  ).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(PgLive.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${database.port}/test`,
      DATABASE_POOL_SIZE: "2"
    }))))),
    Layer.provide(Layer.succeed(ErrorsUrl, "https://errors.test/api"))
  ))))

layer(Served, { timeout: 60_000 })("a service whose database goes away", (it) => {
  it.effect("answers while the database is there", () =>
    Effect.gen(function*() {
      expect(yield* get("/select")).toEqual({ status: 200, retryAfter: undefined, body: { one: 1 } })
    }))

  it.effect("answers a bug in SQL with a bare 500 that names nothing internal", () =>
    Effect.gen(function*() {
      const answer = yield* get("/broken")
      expect(answer.status).toBe(500)
      expect(answer.body).toMatchObject({ errorCode: "INTERNAL", detail: "An internal error occurred. It has been logged." })
      expect(JSON.stringify(answer.body)).not.toMatch(/SELEC|syntax|sql/i)
    }))

  it.effect("answers 503 UNAVAILABLE with Retry-After while the database cannot be reached, then recovers", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => database.cut())
      // Once for the connections dropped under the pool, once for the refused new ones.
      for (const _ of [1, 2]) {
        const answer = yield* get("/select")
        expect(answer).toEqual({
          status: 503,
          retryAfter: "5",
          body: {
            type: "https://errors.test/api/unavailable",
            title: "Service unavailable",
            status: 503,
            detail: "A dependency of the service is unavailable. Retry later.",
            instance: "/select",
            errorCode: "UNAVAILABLE"
          }
        })
      }
      yield* Effect.promise(() => database.open())
      expect((yield* get("/select")).status).toBe(200)
    }))

  it.effect("gives a declared 503 a Retry-After too", () =>
    Effect.gen(function*() {
      const answer = yield* get("/unavailable")
      expect(answer.status).toBe(503)
      expect(answer.retryAfter).toBe("5")
      expect(answer.body).toMatchObject({ errorCode: "UNAVAILABLE", detail: "The mail server did not answer." })
    }))
})

describe("isDependencyDown", () => {
  // As the pool's adapter makes them (`pgError`), the driver's failure classified.
  const sqlError = (cause: unknown, message = "query failed") => pgError(cause, message)

  it("recognises refused, reset and timed-out connections and going-away servers", () => {
    for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "08006", "08001", "57P01", "57P03", "53300"]) {
      expect(isDependencyDown(sqlError(Object.assign(new Error("x"), { code })))).toBe(true)
    }
    expect(isDependencyDown(sqlError(new Error("Connection terminated unexpectedly")))).toBe(true)
    expect(isDependencyDown(sqlError(undefined, "Failed to acquire connection"))).toBe(true)
    expect(isDependencyDown(sqlError(new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })])))).toBe(true)
  })

  it("leaves bugs and data errors to the 500", () => {
    for (const code of ["42601", "23505", "22P02", "40001"]) {
      expect(isDependencyDown(sqlError(Object.assign(new Error("x"), { code })))).toBe(false)
    }
    expect(isDependencyDown(Object.assign(new Error("Connection terminated"), { code: "ECONNREFUSED" }))).toBe(false)
    expect(isDependencyDown("ECONNREFUSED")).toBe(false)
  })
})
