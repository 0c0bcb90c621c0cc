/**
 * The public proxy under test: the gateway's public server in process, in front of two fake
 * upstreams, and the ways the tests call it (fetch, raw node requests, raw socket bytes).
 */
import { CreatePatRequest, CreateScimTokenRequest } from "@portfolio/domain"
import { DefaultHttpLimits, ErrorsUrl } from "@portfolio/platform/http"
import { InternalSecret } from "@portfolio/platform/security"
import { expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer, References } from "effect"
import { randomUUID } from "node:crypto"
import http from "node:http"
import net from "node:net"
import { servePublic } from "../../src/adapters/http/PublicServer.js"
import { UpstreamForwarderHttp } from "../../src/adapters/http/UpstreamForwarderHttp.js"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { ScimTokenCacheMemory } from "../../src/adapters/memory/ScimTokenCacheMemory.js"
import { RateLimitStoreMemory } from "../../src/adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { RecentlyValidTokensMemory } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemory } from "../../src/adapters/memory/rate-limit/SpentAddressesMemory.js"
import { GatewaySettings } from "../../src/Config.js"
import { PartnerTokensJoseWith } from "../../src/adapters/jose/PartnerTokensJose.js"
import { createPat } from "../../src/usecases/ManagePats.js"
import { createScimToken } from "../../src/usecases/ManageScimTokens.js"
import { fakeUpstream, type Reply, type SeenRequest } from "./FakeUpstream.js"
import { TestOperatorCall } from "./OperatorCall.js"
import { GatewayStoresMemory } from "./UnitOfWorkMemory.js"
import { TestSigningKey } from "./SigningKeys.js"
import { testSettings, TestSecret } from "./testConfig.js"

export const errorsUrl = "https://errors.example.test/api"
export const tenantId = "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f"

export const upstreamProblem = JSON.stringify({
  type: `${errorsUrl}/not-found`,
  title: "Not found",
  status: 404,
  detail: "No application CRM-404 in the tenant.",
  instance: "/api/v1/referentiel/applications/CRM-404",
  errorCode: "NOT_FOUND"
})

export const pageLink = "<applications?status=ACTIVE&limit=2&cursor=eyJ2IjoxfQ>; rel=\"next\""

/** A 2 MB JSON answer. */
export const LargeAnswer = JSON.stringify(Array.from({ length: 40_000 }, (_, i) => ({ code: `F${i}`, name: `function ${i}` })))

/** The referential's answers; each harness counts its own cut connections. */
const referentialRoute = (dropped = { count: 0 }) => (request: SeenRequest): Reply => {
  // The first request of this path finds its connection cut, the next one is answered.
  if (request.url === "/api/v1/referentiel/applications/DROP-ONCE" && dropped.count++ === 0) return { drop: true }
  if (request.url.startsWith("/api/v1/referentiel/applications/CRM-404")) {
    return { status: 404, headers: { "content-type": "application/problem+json" }, body: upstreamProblem }
  }
  if (request.url.startsWith("/api/v1/referentiel/functions/posi")) return { status: 200, body: "[]", delayMs: 2_000 }
  if (request.url.startsWith("/api/v1/referentiel/functions/left")) return { status: 200, body: "[]", delayMs: 2_000 }
  if (request.url.startsWith("/api/v1/referentiel/functions/busy-30")) return { status: 503, headers: { "retry-after": "30" }, body: "" }
  if (request.url.startsWith("/api/v1/referentiel/functions/busy")) return { status: 503, headers: { "content-type": "application/problem+json" }, body: "{}" }
  if (request.url.startsWith("/api/v1/referentiel/applications?limit=")) {
    // A paginated list's answer, as the referential writes it (libs/platform/src/http/Pagination.ts).
    return { status: 200, headers: { "content-type": "application/json", link: pageLink }, body: "[]" }
  }
  // An answer of megabytes, which reaches the gateway in many chunks.
  if (request.url.startsWith("/api/v1/referentiel/functions/large")) return { status: 200, headers: { "content-type": "application/json" }, body: LargeAnswer }
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

/** Provisioning's own SCIM error for a User it does not know: the gateway passes it through as it is. */
export const upstreamScimError = JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "404", detail: "No User has this id." })

const provisioningRoute = (request: SeenRequest): Reply =>
  request.url.startsWith("/api/v1/scim/v2/Users/unknown")
    ? { status: 404, headers: { "content-type": "application/scim+json" }, body: upstreamScimError }
    // A POST without a body has its connection cut: sending it again could act twice.
    : request.method === "POST" && request.body === ""
    ? { drop: true }
    : request.method === "POST"
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
export class Harness extends Context.Service<Harness>()("test/ProxyHarness", {
  make: Effect.gen(function*() {
    const referential = yield* fakeUpstream(referentialRoute())
    const provisioning = yield* fakeUpstream(provisioningRoute)
    return { referential, provisioning }
  })
}) {
}

const configLive = (upstreamTimeout: Duration.Duration) =>
  Layer.effect(
    GatewaySettings,
    Effect.map(Harness, (h) =>
      testSettings({
        upstreams: { referential: h.referential.url, provisioning: h.provisioning.url },
        upstreamTimeout,
        rateLimit: { windowMs: 60_000, perToken: 5, perPartner: 600, perScimToken: 4, perAnonymousIp: 25 },
        // Lets a case spend the budget of an address of its own (X-Forwarded-For), not the one all cases share.
        trustedProxyHops: 1
      }))
  )

/** Where the gateway's public server listens in this test. */
export class GatewayUrl extends Context.Service<GatewayUrl, string>()("test/GatewayUrl") {}

/** The gateway's public server in process, with in-memory ports, in front of the fake upstreams. */
const gatewayLive = <R>(upstreamTimeout: Duration.Duration, recording: Layer.Layer<R>) =>
  Layer.effect(
    GatewayUrl,
    Effect.map(servePublic({ port: 0, host: "127.0.0.1" }, DefaultHttpLimits), (address) => `http://127.0.0.1:${address.port}`)
  ).pipe(
    Layer.provideMerge(UpstreamForwarderHttp),
    Layer.provideMerge(Layer.mergeAll(
      GatewayStoresMemory,
      PartnerTokensJoseWith([TestSigningKey]),
      PatCacheMemory,
      ScimTokenCacheMemory,
      RateLimitStoreMemory,
      SpentAddressesMemory,
      RecentlyValidTokensMemory
    )),
    Layer.provideMerge(configLive(upstreamTimeout)),
    Layer.provideMerge(Layer.effect(Harness, Harness.make)),
    Layer.provideMerge(Layer.succeed(InternalSecret, TestSecret)),
    Layer.provideMerge(Layer.succeed(ErrorsUrl, errorsUrl)),
    Layer.provideMerge(recording)
  )

/**
 * Cases run against one gateway and its fake upstreams, shared by the cases of the block.
 * `recording` is where its metrics and logs go (and what the cases may read of them): by default,
 * no log line and the platform's no-op meter.
 */
export const withGateway = <R = never>(upstreamTimeout: Duration.Duration, recording: Layer.Layer<R> = Layer.succeed(References.MinimumLogLevel, "None") as Layer.Layer<R>) =>
  layer(gatewayLive(upstreamTimeout, recording), { excludeTestServices: true, timeout: 30_000 })

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly receivedAtMs: number
}

export const send = (path: string, init: RequestInit & { token?: string } = {}) =>
  Effect.gen(function*() {
    const base = yield* GatewayUrl
    const headers = new Headers(init.headers)
    if (init.token !== undefined) headers.set("authorization", `Bearer ${init.token}`)
    return yield* Effect.promise(async (): Promise<Answer> => {
      const response = await fetch(`${base}${path}`, { ...init, headers })
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, receivedAtMs: Date.now() }
    })
  })

/** A SCIM token of a tenant of its own (a tenant holds two at most): the token and its record's view. */
export const issueScim = (label = "Okta") => createScimToken(randomUUID(), new CreateScimTokenRequest({ label }), TestOperatorCall)

export const issue = (role: CreatePatRequest["role"], scope: CreatePatRequest["scope"]) =>
  Effect.map(
    createPat(new CreatePatRequest({ tenantId, userSub: `sub-${role}`, email: `${role}@example.com`, role, scope, days: 90 }), TestOperatorCall),
    (created) => created.token
  )

export const problem = (errorCode: string, slug: string, title: string, status: number, detail: string, instance: string) => ({
  type: `${errorsUrl}/${slug}`,
  title,
  status,
  detail,
  instance,
  errorCode
})

export const expectRateLimitHeaders = (answer: Answer, limit: number) => {
  expect(answer.headers.get("x-ratelimit-limit")).toBe(String(limit))
  expect(answer.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
  const reset = Number(answer.headers.get("x-ratelimit-reset"))
  // Reset is whole epoch seconds, no earlier than now and within the 60 s window.
  expect(reset).toBeGreaterThanOrEqual(Math.floor(answer.receivedAtMs / 1000) - 1)
  expect(reset).toBeLessThanOrEqual(Math.ceil(answer.receivedAtMs / 1000) + 61)
}

/** Sends a raw request (no client-side normalisation, chosen headers), answering status, headers and body. */
export const rawRequest = (options: http.RequestOptions, body?: (req: http.ClientRequest) => void) =>
  Effect.gen(function*() {
    const base = new URL(yield* GatewayUrl)
    return yield* Effect.callback<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resume) => {
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
export const rawSocket = (bytes: string) =>
  Effect.gen(function*() {
    const base = new URL(yield* GatewayUrl)
    const received = yield* Effect.callback<string>((resume) => {
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
