import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result } from "effect"
import type http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll } from "vitest"
import { DefaultHttpLimits, type HttpLimits, httpLimitsConfig, LimitedServer, rawProblem } from "../../src/http/NodeServer.js"
import { exchange, RawConnection } from "../../testing/RawConnection.js"

const errorsUrl = "https://errors.example.test/api"

/** Short enough for a test, the keep-alive long enough that only the server's own close can end a connection. */
const limits: HttpLimits = { keepAliveTimeoutMs: 600_000, headersTimeoutMs: 300, requestTimeoutMs: 600, maxConnectionsPerClient: 3 }

/** A request to `/held` waits until the test releases it; everything else is answered once its body is read. */
const held: { arrived?: () => void; release?: () => void } = {}
const handler: http.RequestListener = (request, response) => {
  request.resume()
  request.on("end", () => {
    const answer = () => response.writeHead(200, { "content-type": "text/plain", "content-length": 2 }).end("ok")
    if (request.url !== "/held") return answer()
    held.release = answer
    held.arrived?.()
  })
}

const listen = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return (server.address() as AddressInfo).port
}

const expectProblem = (answer: { status: number; headers: Record<string, string>; body: string }, status: number, errorCode: string, instance = "") => {
  expect({ status: answer.status, contentType: answer.headers["content-type"], connection: answer.headers["connection"] }).toEqual({
    status,
    contentType: "application/problem+json",
    connection: "close"
  })
  expect(Buffer.byteLength(answer.body)).toBe(Number(answer.headers["content-length"]))
  expect(JSON.parse(answer.body)).toMatchObject({ type: expect.stringMatching(new RegExp(`^${errorsUrl}/`)), status, errorCode, instance })
}

describe("LimitedServer", () => {
  const server = new LimitedServer(limits, errorsUrl, handler)
  let port = 0
  beforeAll(async () => {
    port = await listen(server)
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("answers headers trickled past the headers timeout with a 408 problem and closes the connection", async () => {
    const slowloris = await RawConnection.open(port)
    slowloris.send("GET / HTTP/1.1\r\nHost: x\r\n")
    void slowloris.trickle("X-Slow: 1\r\n", 50)
    const answer = await slowloris.next()
    expectProblem(answer, 408, "REQUEST_TIMEOUT")
    await slowloris.closed
  })

  it("answers a body trickled past the request timeout with a 408 naming the request's path", async () => {
    const slow = await RawConnection.open(port)
    slow.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n")
    void slow.trickle("a", 50)
    expectProblem(await slow.next(), 408, "REQUEST_TIMEOUT", "/upload")
  })

  it("answers a connection that sends nothing with a 408 too", async () => {
    const silent = await RawConnection.open(port)
    expectProblem(await silent.next(), 408, "REQUEST_TIMEOUT")
  })

  it("answers headers over 16 KiB with a 431 problem", async () => {
    const answer = await exchange(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(17_000)}\r\n\r\n`)
    expectProblem(answer, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE")
    expect(JSON.parse(answer.body).title).toBe("Request header fields too large")
  })

  it("answers a request line that is not HTTP with a 400 problem", async () => {
    expectProblem(await exchange(port, "\x16\x03\x01 garbage\r\n\r\n"), 400, "INVALID_REQUEST")
    expectProblem(await exchange(port, "GET /x HTTP/9.9\r\nHost: x\r\n\r\n"), 400, "INVALID_REQUEST")
  })

  it("answers an HTTP/1.1 request without Host with a 400 problem, and serves HTTP/1.0 without one", async () => {
    expectProblem(await exchange(port, "GET /no-host HTTP/1.1\r\n\r\n"), 400, "INVALID_REQUEST", "/no-host")
    expect((await exchange(port, "GET / HTTP/1.0\r\n\r\n")).status).toBe(200)
  })

  it("keeps an idle kept-alive connection open past the headers and request timeouts", async () => {
    const connection = await RawConnection.open(port)
    connection.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    expect((await connection.next()).status).toBe(200)
    // Idle for longer than both timeouts: they run from a request's first byte, not through the wait before it.
    await new Promise((resolve) => setTimeout(resolve, 3 * limits.requestTimeoutMs))
    connection.send("GET /again HTTP/1.1\r\nHost: x\r\n\r\n")
    expect(await connection.next()).toMatchObject({ status: 200, body: "ok" })
    expect(connection.isClosed).toBe(false)
    await connection.close()
  })

  it("bounds the connections one client address holds open, and admits again once one closes", async () => {
    const held = await Promise.all([1, 2, 3].map(() => RawConnection.open(port)))
    for (const connection of held) {
      connection.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      expect((await connection.next()).status).toBe(200)
    }
    const refused = await RawConnection.open(port)
    refused.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    const answer = await refused.next()
    expectProblem(answer, 429, "RATE_LIMITED")
    expect(answer.headers["retry-after"]).toBe("1")
    await refused.closed
    await held[0]!.close()
    // The server sees the close a moment later: ask until it has.
    let admitted = 0
    for (let attempt = 0; attempt < 100 && admitted !== 200; attempt++) {
      admitted = (await exchange(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).status
    }
    expect(admitted).toBe(200)
    await Promise.all(held.map((connection) => connection.close()))
  })
})

describe("LimitedServer.close", () => {
  it("closes a connection whose request ends after close() instead of keeping it alive", async () => {
    const server = new LimitedServer(limits, errorsUrl, handler)
    const port = await listen(server)
    const connection = await RawConnection.open(port)
    const arrived = new Promise<void>((resolve) => (held.arrived = resolve))
    connection.send("GET /held HTTP/1.1\r\nHost: x\r\n\r\n")
    await arrived
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    held.release!()
    expect((await connection.next()).status).toBe(200)
    // With a keep-alive timeout of ten minutes, only the server's draining can end this.
    await closed
    await connection.closed
  }, 10_000)
})

describe("the limits' configuration", () => {
  const read = (entries: Record<string, string>) =>
    Effect.runSync(Effect.result(Effect.provideService(httpLimitsConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(entries))))

  it("defaults to a keep-alive above an ingress's 60 s, and reads the variables", () => {
    expect(read({})).toEqual(Result.succeed(DefaultHttpLimits))
    expect(DefaultHttpLimits.keepAliveTimeoutMs).toBeGreaterThan(60_000)
    expect(read({ HTTP_KEEP_ALIVE_TIMEOUT: "2 minutes", HTTP_HEADERS_TIMEOUT: "5 seconds", HTTP_REQUEST_TIMEOUT: "5 seconds", MAX_CONNECTIONS_PER_CLIENT: "0" }))
      .toEqual(Result.succeed({ keepAliveTimeoutMs: 120_000, headersTimeoutMs: 5_000, requestTimeoutMs: 5_000, maxConnectionsPerClient: 0 }))
  })

  it("refuses what node would refuse or misread, naming the variable", () => {
    for (const [entries, name] of [
      [{ HTTP_HEADERS_TIMEOUT: "40 seconds" }, "HTTP_HEADERS_TIMEOUT"],
      [{ HTTP_KEEP_ALIVE_TIMEOUT: "0 seconds" }, "HTTP_KEEP_ALIVE_TIMEOUT"],
      [{ HTTP_REQUEST_TIMEOUT: "soon" }, "HTTP_REQUEST_TIMEOUT"],
      [{ MAX_CONNECTIONS_PER_CLIENT: "-1" }, "MAX_CONNECTIONS_PER_CLIENT"]
    ] as const) {
      const result = read(entries)
      expect(Result.isFailure(result) ? String(result.failure) : "accepted").toContain(name)
    }
  })
})

describe("rawProblem", () => {
  it("frames a problem body by its byte length and closes the connection", () => {
    const raw = rawProblem(errorsUrl, "REQUEST_TIMEOUT", "Trop lent, très lent.", "")
    const [head = "", body = ""] = raw.split("\r\n\r\n")
    expect(head.split("\r\n")).toEqual([
      "HTTP/1.1 408 Request Timeout",
      "content-type: application/problem+json",
      `content-length: ${Buffer.byteLength(body)}`,
      "connection: close"
    ])
    expect(JSON.parse(body)).toEqual({
      type: `${errorsUrl}/request-timeout`,
      title: "Request timeout",
      status: 408,
      detail: "Trop lent, très lent.",
      instance: "",
      errorCode: "REQUEST_TIMEOUT"
    })
  })
})
