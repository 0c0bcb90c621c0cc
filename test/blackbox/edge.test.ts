import { RawConnection } from "@portfolio/platform/testing"
import { beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { sendRaw } from "../support/rawHttp.js"
import { type CreatedPat, errorsUrl } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

// Short timeouts so that a slow client is answered within a second; the keep-alive keeps its default.
const system = useSystem({
  HTTP_HEADERS_TIMEOUT: "1 second",
  HTTP_REQUEST_TIMEOUT: "2 seconds",
  MAX_CONNECTIONS_PER_CLIENT: "8",
  RATE_LIMIT_PER_MINUTE: "100000",
  UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: "100000"
})

const application = "/api/v1/referentiel/applications/EDGE-1"
let read: CreatedPat
let write: CreatedPat

beforeAll(async () => {
  const tenant = await system.createTenant("bb-edge")
  ;[read, write] = await Promise.all([system.createPat(tenant, "read"), system.createPat(tenant, "write")])
  await system.putApplication(tenant, { code: "EDGE-1", name: "Edge", status: "ACTIVE" })
})

const gatewayPort = () => Number(new URL(system.system.gatewayUrl).port)

/**
 * The problems answered before a request could be read: no path to name (`instance` is empty),
 * no rate-limit headers (nothing was counted), and the connection closed.
 */
const expectEdgeProblem = (answer: { status: number; headers: Record<string, string>; body: string }, status: number, errorCode: string, slug: string, title: string) => {
  expect({ status: answer.status, contentType: answer.headers["content-type"], connection: answer.headers["connection"] }).toEqual({
    status,
    contentType: "application/problem+json",
    connection: "close"
  })
  expect(JSON.parse(answer.body)).toEqual({ type: `${errorsUrl}/${slug}`, title, status, detail: expect.stringMatching(/\S/), instance: "", errorCode })
}

describe("slow and malformed clients", () => {
  it("answers a slowloris (headers trickled) with a 408 problem within the headers timeout, then closes", async () => {
    const slowloris = await RawConnection.open(gatewayPort())
    slowloris.send("GET /api/v1/referentiel/applications HTTP/1.1\r\nHost: gateway\r\n")
    void slowloris.trickle("X-Slow: 1\r\n", 100)
    expectEdgeProblem(await slowloris.next(), 408, "REQUEST_TIMEOUT", "request-timeout", "Request timeout")
    await slowloris.closed
  })

  it("answers a slow authenticated upload with a 408 problem naming its path, not with a 503 after UPSTREAM_TIMEOUT", async () => {
    const upload = await RawConnection.open(gatewayPort())
    upload.send(
      `POST /api/v1/tenant/invitations HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${write.token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"email":"`
    )
    void upload.trickle("a", 100)
    const answer = await upload.next()
    expect({ status: answer.status, contentType: answer.headers["content-type"] }).toEqual({ status: 408, contentType: "application/problem+json" })
    expect(JSON.parse(answer.body)).toMatchObject({ errorCode: "REQUEST_TIMEOUT", instance: "/api/v1/tenant/invitations" })
    await upload.closed
  })

  it("answers headers over 16 KiB with a 431 problem", async () => {
    const connection = await RawConnection.open(gatewayPort())
    connection.send(`GET ${application} HTTP/1.1\r\nHost: gateway\r\nX-Padding: ${"p".repeat(20_000)}\r\n\r\n`)
    expectEdgeProblem(await connection.next(), 431, "REQUEST_HEADER_FIELDS_TOO_LARGE", "request-header-fields-too-large", "Request header fields too large")
  })

  it("answers a request line that is not HTTP with a 400 problem", async () => {
    const reply = await sendRaw(system.system.gatewayUrl, "HELLO THERE\r\n\r\n")
    expect({ status: reply.status, contentType: reply.contentType, errorCode: reply.body?.errorCode }).toEqual({
      status: 400,
      contentType: "application/problem+json",
      errorCode: "INVALID_REQUEST"
    })
  })

  it("bounds the connections one address holds open: past the bound a 429 problem, and the gateway serves on", async () => {
    const held: Array<RawConnection> = []
    let refused: Awaited<ReturnType<RawConnection["next"]>> | undefined
    // Some of the address's connections may already be open (the suite's own HTTP client keeps some alive).
    while (refused === undefined && held.length <= 8) {
      const connection = await RawConnection.open(gatewayPort())
      connection.send("GET /api/v1/errors HTTP/1.1\r\nHost: gateway\r\n\r\n")
      const answer = await connection.next()
      if (answer.status === 200) held.push(connection)
      else refused = answer
    }
    expect(held.length).toBeLessThanOrEqual(8)
    expectEdgeProblem(refused!, 429, "RATE_LIMITED", "rate-limited", "Too many requests")
    await Promise.all(held.map((connection) => connection.close()))
    let after = 0
    for (let attempt = 0; attempt < 100 && after !== 200; attempt++) after = (await system.api(read.token).get("/referentiel/applications/EDGE-1")).status
    expect(after).toBe(200)
  })
})

describe("keep-alive behind an ingress", () => {
  it("keeps a connection idle for 6 s usable (an ingress reuses its idle upstream connections for 60 s)", async () => {
    const connection = await RawConnection.open(gatewayPort())
    const get = `GET ${application} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${read.token}\r\n\r\n`
    connection.send(get)
    expect((await connection.next()).status).toBe(200)
    // Longer than node's default keep-alive (5 s), and than the headers and request timeouts configured above.
    await new Promise((resolve) => setTimeout(resolve, 6_000))
    expect(connection.isClosed).toBe(false)
    connection.send(get)
    const again = await connection.next()
    expect({ status: again.status, code: JSON.parse(again.body).code }).toEqual({ status: 200, code: "EDGE-1" })
    await connection.close()
  }, 30_000)
})

describe("HEAD", () => {
  it("answers HEAD on a GET endpoint through the gateway like GET: 200, no body, the same headers", async () => {
    const get = await send(`${system.system.gatewayUrl}${application}`, { token: read.token })
    const head = await send(`${system.system.gatewayUrl}${application}`, { token: read.token, method: "HEAD" })
    expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: "" })
    const varying = new Set(["date", "x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "keep-alive", "connection"])
    const stable = (headers: Headers) => [...headers.entries()].filter(([name]) => !varying.has(name))
    expect(stable(head.headers)).toEqual(stable(get.headers))
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(get.text)))
  })
})

describe("HTML pages and CORS", () => {
  it.each(["/api/v1/docs", "/api/v1/errors/request-timeout", "/api/v1/errors"])("serves %s with CSP, X-Frame-Options, nosniff and Referrer-Policy", async (path) => {
    const page = await send(`${system.system.gatewayUrl}${path}`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-security-policy")).toMatch(/frame-ancestors 'none'/)
    expect([page.headers.get("x-frame-options"), page.headers.get("x-content-type-options"), page.headers.get("referrer-policy")]).toEqual([
      "DENY",
      "nosniff",
      "no-referrer"
    ])
  })

  it("sends no CORS header: the reference calls the API from its own origin, other origins get nothing", async () => {
    const docs = await send(`${system.system.gatewayUrl}/api/v1/docs`)
    const document = await send(`${system.system.gatewayUrl}/api/v1/openapi.json`)
    // Served at http://localhost:<port>/api/v1/docs (PUBLIC_BASE_URL's default), "try it" calls that same origin.
    expect(new URL(document.body.servers[0].url).origin).toBe(`http://localhost:${gatewayPort()}`)
    expect(docs.headers.get("content-security-policy")).toMatch(/connect-src 'self'/)
    const origin = { origin: "https://elsewhere.example" }
    const preflight = await send(`${system.system.gatewayUrl}${application}`, {
      method: "OPTIONS",
      headers: { ...origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" }
    })
    const call = await send(`${system.system.gatewayUrl}${application}`, { token: read.token, headers: origin })
    expect(call.status).toBe(200)
    for (const reply of [preflight, call, docs]) {
      expect([...reply.headers.keys()].filter((name) => name.startsWith("access-control-"))).toEqual([])
    }
  })
})

describe("probes", () => {
  it("answers /healthz and /readyz on the gateway's admin port only, never on the public one", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      expect((await send(`${system.system.adminUrls.gateway}${path}`)).status).toBe(200)
      const outside = await send(`${system.system.gatewayUrl}${path}`)
      expect({ status: outside.status, errorCode: outside.body?.errorCode }).toEqual({ status: 404, errorCode: "NOT_FOUND" })
    }
  })

  it("says in /readyz whether the rate limit holds across replicas (the shared windows answer) or each counts its share", async () => {
    const ready = await send(`${system.system.adminUrls.gateway}/readyz`)
    expect(ready.status).toBe(200)
    expect(ready.body).toMatchObject({ status: "ready", rateLimit: { degraded: false, store: "jetstream", replicas: 1 } })
  })
})
