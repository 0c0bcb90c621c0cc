import { afterEach, describe, expect, it, vi } from "vitest"
import { NetworkError, NetworkTimeoutError, PortfolioClient, RateLimitError, ServerError, ServiceUnavailableError } from "../src/index.js"
import { connectionRefused, fakeFetch, instantClient, json, noContent, problem, rejection } from "./support.js"

afterEach(() => {
  vi.restoreAllMocks()
})

const stats = { functionCount: 1 }

describe("retries", () => {
  it("retries a 429 after its Retry-After, then answers", async () => {
    const { fetch, requests } = fakeFetch(problem(429, "RATE_LIMITED", { "retry-after": "2" }), json(stats))
    const client = instantClient(fetch)
    expect(await client.functions.stats()).toEqual(stats)
    expect(requests).toHaveLength(2)
    expect(client.sleeps).toEqual([2000])
  })

  it("retries a 503 of any method, POST included, since the server did not act on it", async () => {
    const { fetch, requests } = fakeFetch(problem(503, "UNAVAILABLE", { "retry-after": "1" }), json({ id: "i" }, 201))
    const client = instantClient(fetch)
    expect(await client.invitations.create({ email: "a@corp.example", arbRole: "viewer" })).toEqual({ id: "i" })
    expect(requests.map((request) => [request.method, request.body])).toEqual([
      ["POST", { email: "a@corp.example", arbRole: "viewer" }],
      ["POST", { email: "a@corp.example", arbRole: "viewer" }]
    ])
    expect(client.sleeps).toEqual([1000])
  })

  it("makes maxRetries + 1 attempts at most, then surfaces the last error", async () => {
    const { fetch, requests } = fakeFetch(
      problem(503, "UNAVAILABLE", { "retry-after": "1" }),
      problem(503, "UNAVAILABLE", { "retry-after": "1" }),
      problem(429, "RATE_LIMITED", { "retry-after": "4" })
    )
    const client = instantClient(fetch)
    const error = await rejection(client.functions.tree())
    expect(error).toBeInstanceOf(RateLimitError)
    expect(error.retryAfter).toBe(4)
    expect(requests).toHaveLength(3)
    expect(client.sleeps).toEqual([1000, 1000])
  })

  it("does not retry with maxRetries 0, on the client or on the call", async () => {
    const onClient = instantClient(fakeFetch(problem(429, "RATE_LIMITED", { "retry-after": "1" })).fetch, { maxRetries: 0 })
    expect(await rejection(onClient.functions.tree())).toBeInstanceOf(RateLimitError)
    expect(onClient.sleeps).toEqual([])

    const { fetch, requests } = fakeFetch(problem(503, "UNAVAILABLE"), problem(503, "UNAVAILABLE"))
    const onCall = instantClient(fetch, { maxRetries: 5 })
    expect(await rejection(onCall.functions.tree({ maxRetries: 1 }))).toBeInstanceOf(ServiceUnavailableError)
    expect(requests).toHaveLength(2)
  })

  it("does not wait for a Retry-After above 60 s: the error surfaces at once", async () => {
    const { fetch, requests } = fakeFetch(problem(429, "RATE_LIMITED", { "retry-after": "61" }))
    const client = instantClient(fetch)
    const error = await rejection(client.applications.list())
    expect(error).toBeInstanceOf(RateLimitError)
    expect(error.retryAfter).toBe(61)
    expect(requests).toHaveLength(1)
    expect(client.sleeps).toEqual([])
  })

  it("waits a Retry-After of exactly 60 s", async () => {
    const { fetch } = fakeFetch(problem(503, "UNAVAILABLE", { "retry-after": "60" }), json([]))
    const client = instantClient(fetch)
    await client.functions.tree()
    expect(client.sleeps).toEqual([60_000])
  })

  it("backs off exponentially with full jitter when there is no Retry-After: random * min(8 s, 0.5 s * 2^n)", async () => {
    const answers = Array.from({ length: 7 }, () => problem(503, "UNAVAILABLE"))
    const { fetch } = fakeFetch(...answers, json([]))
    const client = instantClient(fetch, { maxRetries: 7 })
    vi.spyOn(Math, "random").mockReturnValue(0.5)
    await client.functions.tree()
    expect(client.sleeps).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000])
  })

  it("backs off, rather than retrying at once, after a Retry-After it cannot read", async () => {
    const { fetch, requests } = fakeFetch(problem(503, "UNAVAILABLE", { "retry-after": "1.5" }), problem(429, "RATE_LIMITED", { "retry-after": "-1" }), json([]))
    const client = instantClient(fetch)
    vi.spyOn(Math, "random").mockReturnValue(0.5)
    await client.functions.tree()
    expect(requests).toHaveLength(3)
    expect(client.sleeps).toEqual([250, 500])
  })

  it("draws each back-off anew, below its cap", async () => {
    const { fetch } = fakeFetch(problem(429, "RATE_LIMITED"), problem(429, "RATE_LIMITED"), json([]))
    const client = instantClient(fetch)
    const random = vi.spyOn(Math, "random").mockReturnValueOnce(0).mockReturnValueOnce(0.999)
    await client.functions.tree()
    expect(random).toHaveBeenCalledTimes(2)
    expect(client.sleeps[0]).toBe(0)
    expect(client.sleeps[1]).toBeCloseTo(999, 5)
  })

  it("retries a connection error of a GET and of a DELETE, with back-off", async () => {
    vi.spyOn(Math, "random").mockReturnValue(1 - Number.EPSILON)
    const get = fakeFetch(connectionRefused(), connectionRefused(), json(stats))
    const getClient = instantClient(get.fetch)
    expect(await getClient.functions.stats()).toEqual(stats)
    expect(get.requests).toHaveLength(3)
    expect(getClient.sleeps.map(Math.round)).toEqual([500, 1000])

    const remove = fakeFetch(connectionRefused(), noContent())
    const deleteClient = instantClient(remove.fetch)
    await deleteClient.invitations.revoke("3f2e1d0c-bbaa-4998-8776-655443322110")
    expect(remove.requests.map((request) => request.method)).toEqual(["DELETE", "DELETE"])
  })

  it("never retries a POST after a connection error: it may have reached the server", async () => {
    const { fetch, requests } = fakeFetch(connectionRefused(), json({ id: "i" }, 201))
    const client = instantClient(fetch)
    const error = await rejection(client.invitations.create({ email: "a@corp.example", arbRole: "viewer" }))
    expect(error).toBeInstanceOf(NetworkError)
    expect(requests).toHaveLength(1)
    expect(client.sleeps).toEqual([])
  })

  it("surfaces the last connection error when the retries run out", async () => {
    const last = new TypeError("fetch failed", { cause: new Error("ECONNRESET") })
    const { fetch, requests } = fakeFetch(connectionRefused(), connectionRefused(), last)
    const error = await rejection(instantClient(fetch).applications.get("CRM-01"))
    expect(error).toBeInstanceOf(NetworkError)
    expect(error.cause).toBe(last)
    expect(requests).toHaveLength(3)
  })

  it.each([
    [400, "INVALID_REQUEST"],
    [401, "UNAUTHENTICATED"],
    [403, "INSUFFICIENT_SCOPE"],
    [404, "NOT_FOUND"],
    [409, "ALREADY_INVITED"],
    [500, "INTERNAL"],
    [502, "INTERNAL"],
    [504, "INTERNAL"]
  ] as const)("does not retry a %i", async (status, errorCode) => {
    const { fetch, requests } = fakeFetch(problem(status, errorCode), json([]))
    const client = instantClient(fetch)
    expect(await rejection(client.functions.tree())).toMatchObject({ status })
    expect(requests).toHaveLength(1)
    expect(client.sleeps).toEqual([])
  })

  it("does not retry a timeout", async () => {
    const { fetch, requests } = fakeFetch(() => new Promise<Response>(() => {}), json([]))
    const client = instantClient(fetch, { timeout: 20 })
    expect(await rejection(client.functions.tree())).toBeInstanceOf(NetworkTimeoutError)
    expect(requests).toHaveLength(1)
  })

  it("gives a ServerError, not a retry, for a 500 after a retried 503", async () => {
    const { fetch, requests } = fakeFetch(problem(503, "UNAVAILABLE", { "retry-after": "1" }), problem(500, "INTERNAL"), json([]))
    const error = await rejection(instantClient(fetch).functions.tree())
    expect(error.constructor).toBe(ServerError)
    expect(requests).toHaveLength(2)
  })
})

describe("the wait between attempts", () => {
  class ClockedClient extends PortfolioClient {
    wait(ms: number, signal?: AbortSignal) {
      return this.sleep(ms, signal)
    }
  }

  it("really waits, and stops early with the signal's reason when the call is aborted", async () => {
    const client = new ClockedClient({ token: "t", fetch: fakeFetch().fetch })
    const started = Date.now()
    await client.wait(60)
    expect(Date.now() - started).toBeGreaterThanOrEqual(55)

    const controller = new AbortController()
    const waiting = client.wait(10_000, controller.signal)
    const reason = new Error("caller gave up")
    controller.abort(reason)
    await expect(waiting).rejects.toBe(reason)
    await expect(client.wait(10, controller.signal)).rejects.toBe(reason)
  })

  it("aborting during a Retry-After wait ends the call without another attempt", async () => {
    const { fetch, requests } = fakeFetch(problem(429, "RATE_LIMITED", { "retry-after": "30" }), json([]))
    const client = new PortfolioClient({ token: "t", fetch })
    const controller = new AbortController()
    const call = client.functions.tree({ signal: controller.signal })
    await vi.waitFor(() => expect(requests).toHaveLength(1))
    controller.abort()
    const error = await rejection(call)
    expect(error.name).toBe("AbortError")
    expect(requests).toHaveLength(1)
  })
})
