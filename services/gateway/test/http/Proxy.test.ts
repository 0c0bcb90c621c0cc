import { CallerIdentity, CreatePatRequest } from "@portfolio/domain"
import { ErrorsUrl, InternalSecret, verifyAssertion } from "@portfolio/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, Either, Layer, Logger, LogLevel } from "effect"
import http from "node:http"
import net from "node:net"
import { servePublic } from "../../src/adapters/http/PublicServer.js"
import { UpstreamForwarderLive } from "../../src/adapters/http/UpstreamForwarder.js"
import { PatCacheMemoryLive } from "../../src/adapters/memory/PatCacheMemory.js"
import { SlidingWindowLogLive } from "../../src/adapters/memory/SlidingWindowLog.js"
import { RecentlyValidTokensMemoryLive } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemoryLive } from "../../src/adapters/memory/SpentAddressesMemory.js"
import { GatewayConfig } from "../../src/Config.js"
import { createPat } from "../../src/usecases/ManagePats.js"
import { fakeUpstream, type Reply, type SeenRequest } from "../support/FakeUpstream.js"
import { MemoryPatStore } from "../support/MemoryPatStore.js"
import { testSettings, TestSecret } from "../support/testConfig.js"

const errorsUrl = "https://errors.example.test/api"
const tenantId = "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f"

const upstreamProblem = JSON.stringify({
  type: `${errorsUrl}/not-found`,
  title: "Not found",
  status: 404,
  detail: "No application CRM-404 in the tenant.",
  instance: "/api/v1/referentiel/applications/CRM-404",
  errorCode: "NOT_FOUND"
})

const referentialRoute = (request: SeenRequest): Reply => {
  if (request.url.startsWith("/api/v1/referentiel/applications/CRM-404")) {
    return { status: 404, headers: { "content-type": "application/problem+json" }, body: upstreamProblem }
  }
  if (request.url.startsWith("/api/v1/referentiel/functions/posi")) return { status: 200, body: "[]", delayMs: 2_000 }
  if (request.url.startsWith("/api/v1/referentiel/functions/left")) return { status: 200, body: "[]", delayMs: 2_000 }
  if (request.url.startsWith("/api/v1/referentiel/functions/busy-30")) return { status: 503, headers: { "retry-after": "30" }, body: "" }
  if (request.url.startsWith("/api/v1/referentiel/functions/busy")) return { status: 503, headers: { "content-type": "application/problem+json" }, body: "{}" }
  if (request.url.startsWith("/api/v1/referentiel/functions/limited")) {
    // A 429 without X-RateLimit-Reset says nothing of a window: the gateway's headers stand.
    return { status: 429, headers: { "retry-after": "7", "x-ratelimit-limit": "1" }, body: "" }
  }
  return {
    status: 200,
    headers: { "content-type": "application/json", "x-upstream": "referential", "x-ratelimit-limit": "999999" },
    body: JSON.stringify({ echoed: request.url })
  }
}

/** What provisioning answers past its invitations-per-hour limit: its own window, an hour long. */
const hourlyLimitHeaders = {
  "content-type": "application/problem+json",
  "retry-after": "3599",
  "x-ratelimit-limit": "100",
  "x-ratelimit-remaining": "0",
  "x-ratelimit-reset": "1900000000"
}

const provisioningRoute = (request: SeenRequest): Reply =>
  request.method === "POST"
    ? request.body.includes("over-the-hourly-limit")
      ? {
        status: 429,
        headers: request.body.includes("reset-only")
          ? { "retry-after": hourlyLimitHeaders["retry-after"], "x-ratelimit-reset": hourlyLimitHeaders["x-ratelimit-reset"] }
          : hourlyLimitHeaders,
        body: "{}"
      }
      : { status: 201, headers: { "content-type": "application/json" }, body: JSON.stringify({ received: request.body.length }) }
    : { status: 200, headers: { "content-type": "application/json" }, body: "[]" }

/** Two fake services on loopback ports and the gateway's public app on a third, all in process. */
class Harness extends Effect.Service<Harness>()("test/ProxyHarness", {
  scoped: Effect.gen(function*() {
    const referential = yield* fakeUpstream(referentialRoute)
    const provisioning = yield* fakeUpstream(provisioningRoute)
    return { referential, provisioning }
  })
}) {}

const configLive = (upstreamTimeout: Duration.Duration) =>
  Layer.effect(
    GatewayConfig,
    Effect.map(Harness, (h) =>
      testSettings({
        upstreams: { referential: h.referential.url, provisioning: h.provisioning.url },
        upstreamTimeout,
        rateLimit: { windowMs: 60_000, perToken: 5, perAnonymousIp: 25 },
        // Lets a case spend the budget of an address of its own (X-Forwarded-For), not the one all cases share.
        trustedProxyHops: 1
      }))
  )

/** Where the gateway's public server listens in this test. */
class GatewayUrl extends Context.Tag("test/GatewayUrl")<GatewayUrl, string>() {}

const gatewayLive = (upstreamTimeout: Duration.Duration) =>
  Layer.scoped(
    GatewayUrl,
    Effect.map(servePublic(Effect.void, { port: 0, host: "127.0.0.1" }), (address) => `http://127.0.0.1:${address.port}`)
  ).pipe(
    Layer.provideMerge(UpstreamForwarderLive),
    Layer.provideMerge(Layer.mergeAll(MemoryPatStore.layer, PatCacheMemoryLive, SlidingWindowLogLive, SpentAddressesMemoryLive, RecentlyValidTokensMemoryLive)),
    Layer.provideMerge(configLive(upstreamTimeout)),
    Layer.provideMerge(Harness.Default),
    Layer.provideMerge(Layer.succeed(InternalSecret, TestSecret)),
    Layer.provideMerge(Layer.succeed(ErrorsUrl, errorsUrl)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.None))
  )

const baseUrl = GatewayUrl

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly receivedAtMs: number
}

const send = (path: string, init: RequestInit & { token?: string } = {}) =>
  Effect.gen(function*() {
    const base = yield* baseUrl
    const headers = new Headers(init.headers)
    if (init.token !== undefined) headers.set("authorization", `Bearer ${init.token}`)
    return yield* Effect.promise(async (): Promise<Answer> => {
      const response = await fetch(`${base}${path}`, { ...init, headers })
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, receivedAtMs: Date.now() }
    })
  })

const issue = (role: CreatePatRequest["role"], scope: CreatePatRequest["scope"]) =>
  Effect.map(
    createPat(new CreatePatRequest({ tenantId, userSub: `sub-${role}`, email: `${role}@example.com`, role, scope, days: 90 })),
    (created) => created.token
  )

const problem = (errorCode: string, slug: string, title: string, status: number, detail: string, instance: string) => ({
  type: `${errorsUrl}/${slug}`,
  title,
  status,
  detail,
  instance,
  errorCode
})

const expectRateLimitHeaders = (answer: Answer, limit: number) => {
  expect(answer.headers.get("x-ratelimit-limit")).toBe(String(limit))
  expect(answer.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
  const reset = Number(answer.headers.get("x-ratelimit-reset"))
  // Reset is whole epoch seconds, no earlier than now and within the 60 s window.
  expect(reset).toBeGreaterThanOrEqual(Math.floor(answer.receivedAtMs / 1000) - 1)
  expect(reset).toBeLessThanOrEqual(Math.ceil(answer.receivedAtMs / 1000) + 61)
}

/** Sends a raw request (no client-side normalisation, chosen headers), answering status, headers and body. */
const rawRequest = (options: http.RequestOptions, body?: (req: http.ClientRequest) => void) =>
  Effect.gen(function*() {
    const base = new URL(yield* baseUrl)
    return yield* Effect.async<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resume) => {
      const req = http.request({ hostname: base.hostname, port: base.port, ...options }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() })))
      })
      req.on("error", (error) => resume(Effect.die(error)))
      if (body === undefined) req.end()
      else body(req)
    })
  })


interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/**
 * Writes bytes straight to the gateway's socket and reads until it closes: the only way to send
 * request targets that every HTTP client would refuse or normalise first.
 */
const rawSocket = (bytes: string) =>
  Effect.gen(function*() {
    const base = new URL(yield* baseUrl)
    const received = yield* Effect.async<string>((resume) => {
      const chunks: Array<Buffer> = []
      // Written without ending: a half-closed client counts as gone, and `Connection: close` ends the exchange.
      const socket = net.connect(Number(base.port), base.hostname, () => socket.write(bytes))
      socket.on("data", (chunk: Buffer) => chunks.push(chunk))
      socket.on("error", () => {})
      // A listener that threw leaves the socket open with nothing written: fail the case instead of hanging.
      socket.setTimeout(10_000, () => socket.destroy())
      socket.on("close", () => resume(Effect.succeed(Buffer.concat(chunks).toString("latin1"))))
    })
    const [head = "", body = ""] = received.split("\r\n\r\n", 2)
    const [statusLine = "", ...lines] = head.split("\r\n")
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(":")
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    return { status: Number(statusLine.split(" ")[1] ?? "0"), headers, body } satisfies RawAnswer
  })

describe("public proxy against fake upstreams", () => {
  layer(gatewayLive(Duration.millis(500)), { excludeTestServices: true, timeout: 30_000 })((it) => {
    it.effect("forwards an admitted call with a verifiable assertion, without the client's credentials", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("architect", "read")
        const before = referential.seen.length
        const answer = yield* send("/api/v1/referentiel/applications?status=ACTIVE&criticality=LOW", {
          token,
          headers: {
            "x-portfolio-assertion": "forged.assertion",
            "x-request-id": "client-chosen-id-1",
            "x-custom": "keep me"
          }
        })
        expect(answer.status).toBe(200)
        expect(JSON.parse(answer.text)).toEqual({ echoed: "/api/v1/referentiel/applications?status=ACTIVE&criticality=LOW" })
        expect(answer.headers.get("x-upstream")).toBe("referential")
        expect(answer.headers.get("x-request-id")).toBe("client-chosen-id-1")
        // The gateway's own limit headers replace whatever the upstream said.
        expect(answer.headers.get("x-ratelimit-limit")).toBe("5")
        expect(answer.headers.get("x-ratelimit-remaining")).toBe("4")
        expectRateLimitHeaders(answer, 5)

        expect(referential.seen.length).toBe(before + 1)
        const seen = referential.seen.at(-1)!
        expect(seen.method).toBe("GET")
        expect(seen.url).toBe("/api/v1/referentiel/applications?status=ACTIVE&criticality=LOW")
        expect(seen.headers["authorization"]).toBeUndefined()
        expect(seen.headers["x-custom"]).toBe("keep me")
        expect(seen.headers["x-request-id"]).toBe("client-chosen-id-1")
        expect(seen.headers["host"]).toBe(referential.url.host)
        const verified = verifyAssertion(TestSecret, seen.headers["x-portfolio-assertion"] as string, {
          method: "GET",
          path: "/api/v1/referentiel/applications"
        })
        expect(verified).toEqual(Either.right(new CallerIdentity({ tenantId, subject: "sub-architect", role: "architect", scope: "read" })))
        // Bound to method and path: the same assertion does not verify for another endpoint.
        expect(
          Either.isLeft(verifyAssertion(TestSecret, seen.headers["x-portfolio-assertion"] as string, { method: "GET", path: "/api/v1/referentiel/functions" }))
        ).toBe(true)
      }))

    it.effect("answers a malformed request target with 400 INVALID_REQUEST and keeps serving", () =>
      Effect.gen(function*() {
        const targets = ["http://[bad/x", "http://x:abc/", "http://:99999/x", "http://[::1/", "*", "ftp://gateway/api/v1/referentiel/functions"]
        for (const target of targets) {
          const answer = yield* rawSocket(`GET ${target} HTTP/1.1\r\nHost: gateway\r\nX-Request-Id: raw-1\r\nConnection: close\r\n\r\n`)
          expect({ target, status: answer.status, contentType: answer.headers["content-type"] }).toEqual({
            target,
            status: 400,
            contentType: "application/problem+json"
          })
          expect(JSON.parse(answer.body)).toMatchObject({ errorCode: "INVALID_REQUEST", status: 400, title: "Invalid request" })
          expect(answer.headers["x-ratelimit-limit"]).toBe("25")
          expect(answer.headers["x-ratelimit-remaining"]).toMatch(/^\d+$/)
          expect(answer.headers["x-ratelimit-reset"]).toMatch(/^\d+$/)
          expect(answer.headers["x-request-id"]).toBe("raw-1")
        }
        // The gateway is still there, and still takes the absolute form RFC 9112 asks servers to accept.
        const token = yield* issue("viewer", "read")
        const absolute = yield* rawSocket(
          `GET http://gateway/api/v1/referentiel/functions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`
        )
        expect(absolute.status).toBe(200)
        expect((yield* send("/api/v1/referentiel/functions", { token })).status).toBe(200)
      }))

    it.effect("reads an origin-form target starting with // as a path, not as another host", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const answer = yield* rawSocket(
          `GET //elsewhere/api/v1/referentiel/functions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`
        )
        expect(answer.status).toBe(404)
        expect(JSON.parse(answer.body)).toMatchObject({ errorCode: "NOT_FOUND", instance: "//elsewhere/api/v1/referentiel/functions" })
        // `new URL("//", base)` throws; as a path it is simply not part of the API.
        const bare = yield* rawSocket("GET // HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n")
        expect({ status: bare.status, body: JSON.parse(bare.body) }).toMatchObject({ status: 404, body: { errorCode: "NOT_FOUND", instance: "//" } })
      }))

    it.effect("drops hop-by-hop headers, those named by Connection included", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("architect", "read")
        const answer = yield* rawRequest({
          method: "GET",
          path: "/api/v1/referentiel/functions",
          headers: { authorization: `Bearer ${token}`, connection: "keep-alive, x-hop", "x-hop": "drop me", te: "trailers", "x-kept": "1" }
        })
        expect(answer.status).toBe(200)
        const seen = referential.seen.at(-1)!
        expect(seen.headers["x-hop"]).toBeUndefined()
        expect(seen.headers["te"]).toBeUndefined()
        expect(seen.headers["x-kept"]).toBe("1")
        expect(seen.headers["connection"]).toBe("keep-alive")
      }))

    it.effect("streams a request body to the upstream and passes its status and body back", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const token = yield* issue("tenant-admin", "write")
        const body = JSON.stringify({ email: "new.member@example.com", arbRole: "viewer" })
        const answer = yield* send("/api/v1/tenant/invitations", {
          method: "POST",
          token,
          headers: { "content-type": "application/json" },
          body
        })
        expect(answer.status).toBe(201)
        expect(JSON.parse(answer.text)).toEqual({ received: body.length })
        const seen = provisioning.seen.at(-1)!
        expect(seen.body).toBe(body)
        expect(seen.headers["content-type"]).toBe("application/json")
        expect(seen.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
        expect(answer.headers.get("x-request-id")).toBe(seen.headers["x-request-id"])
      }))

    it.effect("passes the upstream's problem+json errors through untouched", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const answer = yield* send("/api/v1/referentiel/applications/CRM-404", { token })
        expect(answer.status).toBe(404)
        expect(answer.headers.get("content-type")).toBe("application/problem+json")
        expect(answer.text).toBe(upstreamProblem)
        expectRateLimitHeaders(answer, 5)
      }))

    it.effect("reuses pooled keep-alive connections to the upstream", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("portfolio-manager", "read")
        const before = referential.seen.length
        for (let i = 0; i < 5; i++) expect((yield* send("/api/v1/referentiel/functions", { token })).status).toBe(200)
        const ports = new Set(referential.seen.slice(before).map((r) => r.socketPort))
        expect(ports.size).toBe(1)
      }))

    it.effect("answers 401 with a problem body and the per-address limit headers", () =>
      Effect.gen(function*() {
        const missing = yield* send("/api/v1/referentiel/applications")
        expect(missing.status).toBe(401)
        expect(missing.headers.get("content-type")).toBe("application/problem+json")
        expect(missing.headers.get("www-authenticate")).toBe("Bearer realm=\"api\"")
        expect(JSON.parse(missing.text)).toEqual(
          problem(
            "UNAUTHENTICATED",
            "unauthenticated",
            "Unauthenticated",
            401,
            "The request has no Authorization header; send 'Authorization: Bearer <personal access token>'.",
            "/api/v1/referentiel/applications"
          )
        )
        expectRateLimitHeaders(missing, 25)
        const emptyBearer = yield* send("/api/v1/referentiel/applications", { headers: { authorization: "Bearer " } })
        expect(JSON.parse(emptyBearer.text).detail).toBe("The Authorization header has the Bearer scheme but no token.")
        const basic = yield* send("/api/v1/tenant/invitations", { headers: { authorization: "Basic dXNlcjpwYXNz" } })
        expect(JSON.parse(basic.text)).toMatchObject({ errorCode: "UNAUTHENTICATED", instance: "/api/v1/tenant/invitations" })
      }))

    it.effect("answers 403 naming the token's scope and the required one, and the missing role", () =>
      Effect.gen(function*() {
        const readAdmin = yield* issue("tenant-admin", "read")
        const answer = yield* send("/api/v1/tenant/invitations", {
          method: "POST",
          token: readAdmin,
          headers: { "content-type": "application/json" },
          body: "{}"
        })
        expect(answer.status).toBe(403)
        expect(JSON.parse(answer.text)).toEqual(
          problem(
            "INSUFFICIENT_SCOPE",
            "invalid-scope",
            "Insufficient scope",
            403,
            "token scope 'read' does not allow POST /tenant/invitations, which requires 'write'",
            "/api/v1/tenant/invitations"
          )
        )
        expectRateLimitHeaders(answer, 5)
        const contributor = yield* issue("contributor", "write")
        const role = yield* send("/api/v1/tenant/invitations/members/auth0%7C1", { method: "DELETE", token: contributor })
        expect(role.status).toBe(403)
        expect(JSON.parse(role.text).detail).toBe(
          "DELETE /tenant/invitations/members/auth0%7C1 requires the token holder to have the role 'tenant-admin' in the tenant; the holder has 'contributor'"
        )
      }))

    it.effect("answers 404 for anything outside the public list, admin paths included", () =>
      Effect.gen(function*() {
        const token = yield* issue("tenant-admin", "write")
        const put = yield* send("/api/v1/referentiel/applications/CRM-01", { method: "PUT", token, body: "{}" })
        expect(put.status).toBe(404)
        expect(JSON.parse(put.text)).toEqual(
          problem(
            "NOT_FOUND",
            "not-found",
            "Not found",
            404,
            "PUT /api/v1/referentiel/applications/CRM-01 is not an endpoint of the public API.",
            "/api/v1/referentiel/applications/CRM-01"
          )
        )
        expect(put.headers.get("x-ratelimit-remaining")).toBe("4")
        const admin = yield* send("/admin/pats", { method: "POST", token, body: "{}" })
        expect(admin.status).toBe(404)
        expect(JSON.parse(admin.text)).toMatchObject({ errorCode: "NOT_FOUND", instance: "/admin/pats" })
        expectRateLimitHeaders(admin, 25)
        const prefixed = yield* send("/api/v1/admin/tenants", { method: "POST", token, body: "{}" })
        expect(JSON.parse(prefixed.text)).toMatchObject({ errorCode: "NOT_FOUND", instance: "/api/v1/admin/tenants" })
      }))

    it.effect("routes the normalised path: dot segments cannot smuggle a call past the checks", () =>
      Effect.gen(function*() {
        const viewer = yield* issue("viewer", "read")
        const answer = yield* rawRequest({
          method: "GET",
          path: "/api/v1/referentiel/%2e%2e/tenant/invitations",
          headers: { authorization: `Bearer ${viewer}` }
        })
        expect(answer.status).toBe(403)
        expect(JSON.parse(answer.text)).toMatchObject({ errorCode: "INSUFFICIENT_SCOPE", instance: "/api/v1/tenant/invitations" })
      }))

    it.effect("answers 429 with Retry-After consistent with X-RateLimit-Reset once a token is over its limit", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const remaining: Array<string | null> = []
        for (let i = 0; i < 5; i++) remaining.push((yield* send("/api/v1/referentiel/functions/flat", { token })).headers.get("x-ratelimit-remaining"))
        expect(remaining).toEqual(["4", "3", "2", "1", "0"])
        const over = yield* send("/api/v1/referentiel/functions/flat", { token })
        expect(over.status).toBe(429)
        expect(JSON.parse(over.text)).toMatchObject({
          type: `${errorsUrl}/rate-limited`,
          title: "Too many requests",
          status: 429,
          errorCode: "RATE_LIMITED",
          instance: "/api/v1/referentiel/functions/flat"
        })
        expect(over.headers.get("x-ratelimit-remaining")).toBe("0")
        const reset = Number(over.headers.get("x-ratelimit-reset"))
        const retryAfter = Number(over.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(Math.abs(retryAfter - Math.max(1, Math.ceil(reset - over.receivedAtMs / 1000)))).toBeLessThanOrEqual(1)
        expect(JSON.parse(over.text).detail).toBe(`This token made 5 requests in the last 60 seconds, the most allowed; retry after ${retryAfter} seconds.`)
      }))

    it.effect("passes an upstream's 429 with its own window through: its X-RateLimit-* and Retry-After describe the limit that refused", () =>
      Effect.gen(function*() {
        const token = yield* issue("tenant-admin", "write")
        const answer = yield* send("/api/v1/tenant/invitations", {
          method: "POST",
          token,
          headers: { "content-type": "application/json", "x-request-id": "hourly-1" },
          body: JSON.stringify({ email: "over-the-hourly-limit@example.com", arbRole: "viewer" })
        })
        expect(answer.status).toBe(429)
        expect({
          "retry-after": answer.headers.get("retry-after"),
          "x-ratelimit-limit": answer.headers.get("x-ratelimit-limit"),
          "x-ratelimit-remaining": answer.headers.get("x-ratelimit-remaining"),
          "x-ratelimit-reset": answer.headers.get("x-ratelimit-reset")
        }).toEqual({ "retry-after": "3599", "x-ratelimit-limit": "100", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1900000000" })
        expect(answer.headers.get("x-request-id")).toBe("hourly-1")

        // Provisioning says Reset and Retry-After only: the refusing limit has nothing left; its size is not known.
        const resetOnly = yield* send("/api/v1/tenant/invitations", {
          method: "POST",
          token,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "over-the-hourly-limit+reset-only@example.com", arbRole: "viewer" })
        })
        expect({
          status: resetOnly.status,
          "retry-after": resetOnly.headers.get("retry-after"),
          "x-ratelimit-limit": resetOnly.headers.get("x-ratelimit-limit"),
          "x-ratelimit-remaining": resetOnly.headers.get("x-ratelimit-remaining"),
          "x-ratelimit-reset": resetOnly.headers.get("x-ratelimit-reset")
        }).toEqual({ status: 429, "retry-after": "3599", "x-ratelimit-limit": "5", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1900000000" })

        const bare = yield* send("/api/v1/referentiel/functions/limited", { token })
        expect(bare.status).toBe(429)
        expect(bare.headers.get("retry-after")).toBe("7")
        expect(bare.headers.get("x-ratelimit-limit")).toBe("5")
      }))

    it.effect("adds Retry-After to an upstream's 503 that has none, and keeps the upstream's own", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const bare = yield* send("/api/v1/referentiel/functions/busy", { token })
        expect({ status: bare.status, retryAfter: bare.headers.get("retry-after"), body: bare.text }).toEqual({ status: 503, retryAfter: "5", body: "{}" })
        expectRateLimitHeaders(bare, 5)
        const own = yield* send("/api/v1/referentiel/functions/busy-30", { token })
        expect({ status: own.status, retryAfter: own.headers.get("retry-after") }).toEqual({ status: 503, retryAfter: "30" })
      }))

    it.effect("refuses bodies over 1 MiB with 413, declared or streamed", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const token = yield* issue("tenant-admin", "write")
        const declared = yield* rawRequest(
          {
            method: "POST",
            path: "/api/v1/tenant/invitations",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(2 * 1024 * 1024) }
          },
          (req) => req.end()
        )
        expect(declared.status).toBe(413)
        expect(JSON.parse(declared.text)).toMatchObject({ errorCode: "PAYLOAD_TOO_LARGE", status: 413, instance: "/api/v1/tenant/invitations" })
        const before = provisioning.seen.length
        const streamed = yield* rawRequest(
          { method: "POST", path: "/api/v1/tenant/invitations", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" } },
          (req) => {
            const chunk = Buffer.alloc(64 * 1024, "a")
            let sent = 0
            const pump = () => {
              while (sent < 20) {
                sent++
                if (!req.write(chunk)) return void req.once("drain", pump)
              }
              req.end()
            }
            req.on("error", () => {})
            pump()
          }
        )
        expect(streamed.status).toBe(413)
        expect(JSON.parse(streamed.text)).toMatchObject({ errorCode: "PAYLOAD_TOO_LARGE", detail: "The request body exceeds 1048576 bytes." })
        expect(provisioning.seen.length).toBe(before)
      }))

    it.effect("answers 503 with Retry-After when the upstream does not answer in time", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("viewer", "read")
        const answer = yield* send("/api/v1/referentiel/functions/posi", { token })
        expect(answer.status).toBe(503)
        expect(answer.headers.get("retry-after")).toBe("5")
        expect(JSON.parse(answer.text)).toEqual(
          problem(
            "UNAVAILABLE",
            "unavailable",
            "Service unavailable",
            503,
            "The referential service did not answer in time; retry shortly.",
            "/api/v1/referentiel/functions/posi"
          )
        )
        expectRateLimitHeaders(answer, 5)
        // The gateway gave up on the upstream call rather than leaving it to finish.
        yield* Effect.promise(async () => {
          while (!referential.abandoned.includes("/api/v1/referentiel/functions/posi")) await new Promise((r) => setTimeout(r, 10))
        })
      }))

    it.effect("serves the OpenAPI document, the reference and the error pages without a token", () =>
      Effect.gen(function*() {
        const openApi = yield* send("/api/v1/openapi.json")
        expect(openApi.status).toBe(200)
        expect(openApi.headers.get("content-type")).toBe("application/json")
        const doc = JSON.parse(openApi.text)
        expect(doc.openapi).toBe("3.1.0")
        expect(doc.servers).toEqual([{ url: "http://localhost:8080/api/v1", description: "Public base URL (includes /api/v1)." }])
        expectRateLimitHeaders(openApi, 25)
        const docs = yield* send("/api/v1/docs")
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
        expect(docs.text).toContain("<script id=\"api-reference\" type=\"application/json\">")
        expect(docs.text).not.toMatch(/<script[^>]+src=/)
        expectRateLimitHeaders(docs, 25)
        const page = yield* send("/api/v1/errors/invalid-scope")
        expect(page.status).toBe(200)
        expect(page.text).toContain("<h1>Insufficient scope</h1>")
        expect(page.text).toContain("<code>INSUFFICIENT_SCOPE</code>")
        const unknown = yield* send("/api/v1/errors/no-such-error")
        expect(unknown.status).toBe(404)
        expect(JSON.parse(unknown.text)).toMatchObject({ errorCode: "NOT_FOUND", instance: "/api/v1/errors/no-such-error" })
      }))

    it.effect("limits calls without a valid token per address: 429 instead of 401 past the limit", () =>
      Effect.gen(function*() {
        const from = (address: string, token?: string) => ({ headers: { "x-forwarded-for": address }, ...(token === undefined ? {} : { token }) })
        const flooder = "198.51.100.77"
        // Verified once from elsewhere, so the cache holds it when it comes from the flooding address.
        const verified = yield* issue("viewer", "read")
        expect((yield* send("/api/v1/referentiel/functions", from("198.51.100.78", verified))).status).toBe(200)
        let last = yield* send("/api/v1/referentiel/applications", from(flooder, "ap_pat_bogus"))
        while (last.headers.get("x-ratelimit-remaining") !== "0") {
          expect(last.status).toBe(401)
          last = yield* send("/api/v1/referentiel/applications", from(flooder, "ap_pat_bogus"))
        }
        const over = yield* send("/api/v1/referentiel/applications", from(flooder, "ap_pat_bogus"))
        expect(over.status).toBe(429)
        expect(JSON.parse(over.text)).toMatchObject({ errorCode: "RATE_LIMITED" })
        expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        expect(over.headers.get("x-ratelimit-limit")).toBe("25")
        // The documentation pages share the address's budget.
        expect((yield* send("/api/v1/openapi.json", from(flooder))).status).toBe(429)
        // A verified token is counted on its own budget, not the address's.
        const admitted = yield* send("/api/v1/referentiel/functions", from(flooder, verified))
        expect({ status: admitted.status, limit: admitted.headers.get("x-ratelimit-limit") }).toEqual({ status: 200, limit: "5" })
        // One the cache does not hold is not looked up from a spent address (README, "Known limits").
        const unverified = yield* issue("viewer", "read")
        expect((yield* send("/api/v1/referentiel/functions", from(flooder, unverified))).status).toBe(429)
        expect((yield* send("/api/v1/referentiel/functions", { token: unverified })).status).toBe(200)
      }))

    it.effect("answers 503 when the upstream is down", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const token = yield* issue("tenant-admin", "read")
        expect((yield* send("/api/v1/tenant/invitations", { token })).status).toBe(200)
        yield* Effect.async<void>((resume) => {
          provisioning.server.closeAllConnections()
          provisioning.server.close(() => resume(Effect.void))
        })
        const answer = yield* send("/api/v1/tenant/invitations", { token })
        expect(answer.status).toBe(503)
        expect(answer.headers.get("retry-after")).toBe("5")
        expect(JSON.parse(answer.text)).toEqual(
          problem(
            "UNAVAILABLE",
            "unavailable",
            "Service unavailable",
            503,
            "The provisioning service is unavailable; retry shortly.",
            "/api/v1/tenant/invitations"
          )
        )
        expectRateLimitHeaders(answer, 5)
      }))
  })
})

describe("public proxy, client going away", () => {
  // The upstream timeout is far beyond the upstream's 2-second delay: only the client's abort can cut the call short.
  layer(gatewayLive(Duration.seconds(25)), { excludeTestServices: true, timeout: 30_000 })((it) => {
    it.effect("cancels the upstream call when the client aborts before the answer", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("viewer", "read")
        const base = new URL(yield* baseUrl)
        const path = "/api/v1/referentiel/functions/left"
        yield* Effect.async<void>((resume) => {
          const req = http.request({ hostname: base.hostname, port: base.port, path, headers: { authorization: `Bearer ${token}` } })
          req.on("error", () => resume(Effect.void))
          req.end()
          const abortOnceSeen = setInterval(() => {
            if (referential.seen.some((seen) => seen.url === path)) {
              clearInterval(abortOnceSeen)
              req.destroy()
            }
          }, 5)
        })
        // Waits past the upstream's 2-second delay: an upstream call left running would have answered by then.
        const abandoned = yield* Effect.promise(async () => {
          const giveUpAt = Date.now() + 3_000
          while (!referential.abandoned.includes(path) && Date.now() < giveUpAt) await new Promise((r) => setTimeout(r, 10))
          return referential.abandoned.includes(path)
        })
        expect(abandoned).toBe(true)
        // The gateway keeps serving after the abort.
        expect((yield* send("/api/v1/referentiel/functions", { token })).status).toBe(200)
      }))
  })
})
