import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { Caller, CallerIdentity, OperatorAuthentication, Problems, Unauthenticated } from "@portfolio/domain"
import { Effect, Layer, Schema } from "effect"
import http from "node:http"
import { answerProblems, ErrorsUrl, ProblemMiddlewareLive } from "../../src/http/ProblemResponse.js"
import { guardRequests, MaxBodyBytes, MaxJsonDepth, PathRefusals, RouterConfig } from "../../src/http/RequestGuards.js"
import { aroundRouter } from "../../src/http/Server.js"

const Thing = Schema.Struct({ name: Schema.String })

class ThingsGroup extends HttpApiGroup.make("things")
  .add(HttpApiEndpoint.post("create", "/things", { payload: Thing, success: Schema.String }))
  .add(HttpApiEndpoint.put("rename", "/things/:id", { params: { id: Schema.String }, payload: Thing, success: Schema.String }))
  .add(HttpApiEndpoint.get("read", "/things/:id", { params: { id: Schema.String.check(Schema.isMaxLength(255)) }, success: Schema.Number }))
  .add(HttpApiEndpoint.delete("remove", "/things/:id", { params: { id: Schema.String } }))
  .middleware(OperatorAuthentication) {}

class Api extends HttpApi.make("guarded").add(ThingsGroup).middleware(Problems) {}

const ThingsLive = HttpApiBuilder.group(Api, "things", (handlers) =>
  handlers
    .handle("create", ({ payload }) => Effect.succeed(`created ${payload.name}`))
    .handle("rename", ({ params, payload }) => Effect.succeed(`${params.id.length} ${payload.name}`))
    .handle("read", ({ params }) => Effect.succeed(params.id.length))
    .handle("remove", () => Effect.void))

const caller = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "t", role: "operator", scope: "admin" })
const AuthenticationLive = Layer.succeed(OperatorAuthentication, (httpEffect) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.headers["x-caller"] !== "ok") return yield* Effect.fail(new Unauthenticated({ detail: "who?" }))
    return yield* Effect.provideService(httpEffect, Caller, caller)
  }))

// A plain route next to the API, as the magic-link page: its form is none of the guard's business.
const FormRouteLive = HttpRouter.add(
  "POST",
  "/form/:token",
  Effect.map(HttpServerRequest.schemaBodyUrlParams(Schema.Struct({ password: Schema.String })), ({ password }) =>
    HttpServerResponse.text(`form ${password.length}`))
)

/** The server as serveApi composes it once wired: the guard around the router, the router settings under it. */
const GuardedServer = HttpRouter.serve(
  Layer.mergeAll(
    HttpApiBuilder.layer(Api).pipe(Layer.provide(ThingsLive), Layer.provide(AuthenticationLive), Layer.provide(ProblemMiddlewareLive)),
    FormRouteLive,
    aroundRouter((app) => guardRequests(Api)(answerProblems(app)))
  ),
  { routerConfig: RouterConfig, disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(Layer.succeed(ErrorsUrl, "https://errors.test/api"))
)

interface Answer {
  readonly status: number
  readonly contentType: string | undefined
  readonly text: string
}

/**
 * A request as sent, byte for byte, on a connection of its own: no client here may normalise the
 * path or add a Content-Type, and no answer sent before its body was read may spoil the next one.
 */
const raw = (method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.callback<Answer>((resume) => {
      const port = server.address._tag === "UnixPathAddress" ? 0 : server.address.port
      const request = http.request({ host: "127.0.0.1", port, method, path, agent: false, headers: { "x-caller": "ok", ...headers } }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () =>
          resume(Effect.succeed({ status: response.statusCode ?? 0, contentType: response.headers["content-type"], text: Buffer.concat(chunks).toString() })))
      })
      request.on("error", (error) => resume(Effect.die(error)))
      request.end(body)
    }))

const json = (text: string) => ({ "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) })

const expectProblem = (answer: Answer, status: number, errorCode: string, instance: string) => {
  expect({ status: answer.status, contentType: answer.contentType }).toEqual({ status, contentType: "application/problem+json" })
  expect(JSON.parse(answer.text)).toMatchObject({ status, errorCode, instance })
  return JSON.parse(answer.text) as { readonly detail: string }
}

layer(GuardedServer)("an HttpApi server behind the request guards", (it) => {
  it.effect("refuses paths read differently by different parties with 400, before routing and authentication", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<[string, string]> = [
        ["/things/a;b", PathRefusals.semicolon],
        ["/things;x", PathRefusals.semicolon],
        ["/things/../things", PathRefusals.dotSegment],
        ["/things/%2e%2E", PathRefusals.dotSegment],
        ["/x/./things", PathRefusals.dotSegment],
        ["/things/a%2Fb", PathRefusals.encodedSlash],
        ["/things/a\\b", PathRefusals.backslash],
        ["/things/%zz", PathRefusals.badEscape],
        ["/things/{x}", PathRefusals.unencoded]
      ]
      for (const [path, detail] of cases) {
        for (const who of ["ok", "nobody"]) {
          const answer = yield* raw("GET", `${path}?q=1`, { "x-caller": who })
          expect({ path, detail: expectProblem(answer, 400, "INVALID_REQUEST", path).detail }).toEqual({ path, detail })
        }
      }
    }))

  it.effect("routes a path parameter as long as its schema allows, and past find-my-way's default of 100", () =>
    Effect.gen(function*() {
      const longest = yield* raw("GET", `/things/${encodeURIComponent("\u20ac".repeat(255))}`)
      expect({ status: longest.status, text: longest.text }).toEqual({ status: 200, text: "255" })
      const tooLong = yield* raw("GET", `/things/${"a".repeat(256)}`)
      expectProblem(tooLong, 400, "INVALID_REQUEST", `/things/${"a".repeat(256)}`)
      const unbounded = yield* raw("PUT", `/things/${"b".repeat(8000)}`, json(`{"name":"x"}`), `{"name":"x"}`)
      expect({ status: unbounded.status, text: unbounded.text }).toEqual({ status: 200, text: "\"8000 x\"" })
    }))

  it.effect("refuses a body that is not application/json with 415 on endpoints that take JSON", () =>
    Effect.gen(function*() {
      const bodies: ReadonlyArray<[Record<string, string>, string]> = [
        [{ "content-type": "application/x-www-form-urlencoded" }, "name=form"],
        [{ "content-type": "text/plain" }, `{"name":"text"}`],
        [{ "content-type": "application/merge-patch+json" }, `{"name":"merge"}`],
        [{ "content-type": "application/json; charset=iso-8859-1" }, `{"name":"latin"}`],
        [{ "content-type": "multipart/form-data; boundary=x" }, "--x\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nm\r\n--x--\r\n"],
        [{}, `{"name":"none"}`],
        [{ "content-type": "application/x-www-form-urlencoded", "transfer-encoding": "chunked" }, "name=chunked"]
      ]
      for (const [headers, body] of bodies) {
        for (const [method, path] of [["POST", "/things"], ["PUT", "/things/1"], ["POST", "/things/"]] as const) {
          const answer = yield* raw(method, path, headers, body)
          expectProblem(answer, 415, "UNSUPPORTED_MEDIA_TYPE", path)
        }
      }
    }))

  it.effect("routes case-sensitively, as the gateway's allow-list compares segments: /THINGS is no endpoint", () =>
    Effect.gen(function*() {
      const answer = yield* raw("POST", "/THINGS", json(`{"name":"upper"}`), `{"name":"upper"}`)
      expectProblem(answer, 404, "NOT_FOUND", "/THINGS")
    }))

  it.effect("takes application/json with or without a UTF-8 charset, and leaves other routes and bodiless endpoints alone", () =>
    Effect.gen(function*() {
      for (const contentType of ["application/json", "Application/JSON; charset=UTF-8"]) {
        const answer = yield* raw("POST", "/things", { "content-type": contentType }, `{"name":"ok"}`)
        expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: "\"created ok\"" })
      }
      const form = yield* raw("POST", "/form/t1", { "content-type": "application/x-www-form-urlencoded" }, "password=secret")
      expect({ status: form.status, text: form.text }).toEqual({ status: 200, text: "form 6" })
      const removed = yield* raw("DELETE", "/things/1", { "content-type": "text/plain" }, "whatever")
      expect(removed.status).toBe(204)
    }))

  it.effect("refuses JSON nested deeper than the limit with 400 before parsing, and parses it up to the limit", () =>
    Effect.gen(function*() {
      const nested = (depth: number) => `{"name":"deep","extra":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`
      for (const body of ["[".repeat(3000) + "]".repeat(3000), nested(MaxJsonDepth + 1), `{"name":${"{\"a\":".repeat(5000)}1${"}".repeat(5000)}}`]) {
        const answer = yield* raw("POST", "/things", json(body), body)
        expect(expectProblem(answer, 400, "INVALID_REQUEST", "/things").detail).toContain(`deeper than ${MaxJsonDepth} levels`)
      }
      const atLimit = yield* raw("POST", "/things", json(nested(MaxJsonDepth)), nested(MaxJsonDepth))
      expect({ status: atLimit.status, text: atLimit.text }).toEqual({ status: 200, text: "\"created deep\"" })
      const bracketsInText = JSON.stringify({ name: "[".repeat(3000) })
      expect((yield* raw("POST", "/things", json(bracketsInText), bracketsInText)).status).toBe(200)
    }))

  it.effect("answers huge but shallow bodies with a 4xx, and refuses a declared size over 1 MiB with 413 unread, on any route", () =>
    Effect.gen(function*() {
      const count = Math.floor((MaxBodyBytes - 2) / 2)
      const hugeArray = `[${Array.from({ length: count }, () => "0").join(",")}]`
      const answer = yield* raw("POST", "/things", json(hugeArray), hugeArray)
      expectProblem(answer, 400, "INVALID_REQUEST", "/things")
      const hugeField = JSON.stringify({ name: Array.from({ length: count / 2 }, () => 0) })
      expectProblem(yield* raw("POST", "/things", json(hugeField), hugeField), 400, "INVALID_REQUEST", "/things")
      const padded = (size: number) => {
        const bare = JSON.stringify({ name: "big", pad: "" })
        return JSON.stringify({ name: "big", pad: "x".repeat(size - bare.length) })
      }
      const exactly = yield* raw("POST", "/things", json(padded(MaxBodyBytes)), padded(MaxBodyBytes))
      expect(exactly.status).toBe(200)
      const over = yield* raw("POST", "/things", json(padded(MaxBodyBytes + 1)), padded(MaxBodyBytes + 1))
      expectProblem(over, 413, "PAYLOAD_TOO_LARGE", "/things")
      const threeMiB = Buffer.alloc(3 * MaxBodyBytes, "a")
      for (const [method, path] of [["POST", "/things"], ["DELETE", "/things/1"], ["POST", "/form/t1"], ["POST", "/nothing-here"]] as const) {
        const declared = yield* raw(method, path, { "content-type": "text/plain", "content-length": String(threeMiB.length) }, threeMiB)
        expectProblem(declared, 413, "PAYLOAD_TOO_LARGE", path)
      }
    }))

  it.effect("leaves the router's own answers as they were", () =>
    Effect.gen(function*() {
      expectProblem(yield* raw("GET", "/nothing-here"), 404, "NOT_FOUND", "/nothing-here")
      expectProblem(yield* raw("POST", "/things", { ...json(`{"name":"x"}`), "x-caller": "nobody" }, `{"name":"x"}`), 401, "UNAUTHENTICATED", "/things")
    }))
})
