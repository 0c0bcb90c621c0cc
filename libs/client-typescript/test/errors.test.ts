import { createServer } from "node:net"
import { describe, expect, it } from "vitest"
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NetworkError,
  NetworkTimeoutError,
  NotFoundError,
  PermissionDeniedError,
  PortfolioClient,
  PortfolioError,
  RateLimitError,
  ServerError,
  ServiceUnavailableError
} from "../src/index.js"
import { parseRetryAfter } from "../src/errors.js"
import { connectionRefused, fakeFetch, instantClient, json, problem, rejection } from "./support.js"

const failWith = (answer: Response | Error) => rejection(instantClient(fakeFetch(answer).fetch, { maxRetries: 0 }).applications.get("CRM-01"))

describe("error answers", () => {
  it.each([
    [400, "INVALID_REQUEST", BadRequestError],
    [401, "UNAUTHENTICATED", AuthenticationError],
    [403, "INSUFFICIENT_SCOPE", PermissionDeniedError],
    [404, "NOT_FOUND", NotFoundError],
    [409, "ALREADY_INVITED", ConflictError],
    [429, "RATE_LIMITED", RateLimitError],
    [500, "INTERNAL", ServerError],
    [503, "UNAVAILABLE", ServiceUnavailableError]
  ] as const)("%i %s is a %o", async (status, errorCode, errorClass) => {
    const error = await failWith(problem(status, errorCode))
    expect(error.constructor).toBe(errorClass)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toBeInstanceOf(PortfolioError)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({
      name: errorClass.name,
      status,
      errorCode,
      title: "Title",
      detail: `detail of ${errorCode}`,
      instance: "/api/v1/x",
      type: `http://localhost:8080/api/v1/errors/${errorCode.toLowerCase()}`,
      requestId: "req_test",
      rateLimit: { limit: 180, remaining: 179, reset: 1795340460 }
    })
    expect(error.body).toMatchObject({ errorCode, status })
    expect(error.headers.get("content-type")).toBe("application/problem+json")
    expect(error.message).toBe(`${status} ${errorCode}: detail of ${errorCode} (request req_test)`)
  })

  it("makes ServiceUnavailableError a ServerError", async () => {
    expect(await failWith(problem(503, "UNAVAILABLE"))).toBeInstanceOf(ServerError)
  })

  it("gives statuses without a class of their own a plain ApiError, and any other 5xx a ServerError", async () => {
    for (const [status, errorCode] of [[408, "REQUEST_TIMEOUT"], [413, "PAYLOAD_TOO_LARGE"], [415, "UNSUPPORTED_MEDIA_TYPE"], [431, "REQUEST_HEADER_FIELDS_TOO_LARGE"]] as const) {
      const error = await failWith(problem(status, errorCode))
      expect(error.constructor).toBe(ApiError)
      expect(error).toMatchObject({ status, errorCode })
    }
    for (const status of [501, 502, 504]) expect((await failWith(new Response("", { status }))).constructor).toBe(ServerError)
  })

  it("keeps the class of the status when the body is not JSON, with null problem fields and the text as body", async () => {
    const error = await failWith(new Response("<html><body>Bad gateway</body></html>", { status: 502, headers: { "content-type": "text/html" } }))
    expect(error.constructor).toBe(ServerError)
    expect(error).toMatchObject({ status: 502, errorCode: null, title: null, detail: null, instance: null, type: null, requestId: null, rateLimit: null })
    expect(error.body).toBe("<html><body>Bad gateway</body></html>")
    expect(error.message).toBe("502: <html><body>Bad gateway</body></html>")

    const broken = await failWith(new Response('{"errorCode": "NOT_FO', { status: 404, headers: { "content-type": "application/problem+json" } }))
    expect(broken).toBeInstanceOf(NotFoundError)
    expect(broken.errorCode).toBeNull()

    const empty = await failWith(new Response(null, { status: 429, headers: { "retry-after": "3" } }))
    expect(empty).toBeInstanceOf(RateLimitError)
    expect(empty).toMatchObject({ errorCode: null, body: null, retryAfter: 3 })
    expect(empty.message).toBe("429: no details")
  })

  it("reads retryAfter on 429 and 503, in seconds or as an HTTP date, null without the header", async () => {
    expect((await failWith(problem(429, "RATE_LIMITED", { "retry-after": "7" }))).retryAfter).toBe(7)
    expect((await failWith(problem(503, "UNAVAILABLE", { "retry-after": "2" }))).retryAfter).toBe(2)
    expect((await failWith(problem(429, "RATE_LIMITED"))).retryAfter).toBeNull()
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString()
    const dated = (await failWith(problem(429, "RATE_LIMITED", { "retry-after": inTenSeconds }))).retryAfter
    expect(dated).toBeGreaterThanOrEqual(9)
    expect(dated).toBeLessThanOrEqual(10)
  })

  it("reads the three forms of an HTTP-date, the asctime one as GMT whatever the local zone", () => {
    const now = Date.UTC(1994, 10, 6, 8, 49, 30)
    const after = (value: string) => parseRetryAfter(new Headers({ "retry-after": value }), now)
    expect(after("Sun, 06 Nov 1994 08:49:37 GMT")).toBe(7)
    expect(after("Sunday, 06-Nov-94 08:49:37 GMT")).toBe(7)
    expect(after("Sun Nov  6 08:49:37 1994")).toBe(7)
    expect(after("Sun, 06 Nov 1994 08:49:00 GMT")).toBe(0)
    expect(after(" 12 ")).toBe(12)
  })

  it("reads a Retry-After that is neither seconds nor an HTTP-date as absent, not as 'retry at once'", async () => {
    // Date.parse reads each of these as a date of the past.
    for (const value of ["1.5", "-1", "2 s", "12.5.2020", "tomorrow 1"]) {
      expect(parseRetryAfter(new Headers({ "retry-after": value })), value).toBeNull()
      expect((await failWith(problem(429, "RATE_LIMITED", { "retry-after": value }))).retryAfter, value).toBeNull()
    }
  })

  it("can be thrown and inspected by callers' own tests", () => {
    const error = new ConflictError(409, new Headers({ "x-request-id": "r" }), { errorCode: "ALREADY_INVITED", detail: "d" })
    expect(error).toMatchObject({ status: 409, errorCode: "ALREADY_INVITED", requestId: "r", name: "ConflictError" })
  })
})

describe("failures without an answer", () => {
  it("makes a connection failure a NetworkError, not an ApiError, with the cause kept", async () => {
    const cause = connectionRefused()
    const error = await failWith(cause)
    expect(error).toBeInstanceOf(NetworkError)
    expect(error).toBeInstanceOf(PortfolioError)
    expect(error).not.toBeInstanceOf(ApiError)
    expect(error).not.toBeInstanceOf(NetworkTimeoutError)
    expect(error.cause).toBe(cause)
    expect(error.message).toBe("GET https://api.example.test/api/v1/referentiel/applications/CRM-01: no answer: fetch failed (connect ECONNREFUSED 127.0.0.1:9)")
  })

  it("makes a refused connection of the platform's fetch a NetworkError naming the reason", async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as { port: number }
    await new Promise((resolve) => server.close(resolve))
    const client = new PortfolioClient({ token: "t", baseUrl: `http://127.0.0.1:${port}/api/v1`, maxRetries: 0 })
    const error = await rejection(client.functions.stats())
    expect(error).toBeInstanceOf(NetworkError)
    expect(error).not.toBeInstanceOf(ApiError)
    expect(error.message).toMatch(/ECONNREFUSED/)
  })

  it("makes an unreadable body a NetworkError", async () => {
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("[1,"))
        controller.error(new Error("socket hang up"))
      }
    })
    const error = await failWith(new Response(body, { status: 200 }))
    expect(error).toBeInstanceOf(NetworkError)
    expect(error.message).toMatch(/body could not be read/)
  })

  it("makes a success answer that is not JSON a PortfolioError, not a NetworkError", async () => {
    const error = await failWith(new Response("<html>portal</html>", { status: 200, headers: { "content-type": "text/html" } }))
    expect(error.constructor).toBe(PortfolioError)
    expect(error.message).toMatch(/not JSON/)
  })

  it("accepts a success answer whose empty body means no data", async () => {
    const { fetch } = fakeFetch(new Response("", { status: 200 }), json(null))
    const client = instantClient(fetch)
    await expect(client.functions.stats()).resolves.toBeUndefined()
    await expect(client.functions.stats()).resolves.toBeNull()
  })
})
