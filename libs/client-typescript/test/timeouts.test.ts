import { describe, expect, it, vi } from "vitest"
import { NetworkError, NetworkTimeoutError } from "../src/index.js"
import { fakeFetch, instantClient, json, rejection, type SentRequest } from "./support.js"

/** A fetch that never answers and ignores its signal, the worst case. */
const silent = () => new Promise<Response>(() => {})

/** A fetch that never answers but rejects with the signal's reason when it aborts, as the platform's does. */
const silentUntilAborted = (request: SentRequest) =>
  new Promise<Response>((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)))

describe("timeouts", () => {
  it("gives a NetworkTimeoutError when fetch never answers, and aborts the request's signal", async () => {
    const { fetch, requests } = fakeFetch(silent)
    const started = Date.now()
    const error = await rejection(instantClient(fetch, { timeout: 50, maxRetries: 0 }).functions.stats())
    expect(Date.now() - started).toBeGreaterThanOrEqual(45)
    expect(error).toBeInstanceOf(NetworkTimeoutError)
    expect(error).toBeInstanceOf(NetworkError)
    expect(error.timeout).toBe(50)
    expect(error.message).toBe("GET https://api.example.test/api/v1/referentiel/functions/stats timed out after 50 ms")
    expect(requests[0]!.signal.aborted).toBe(true)
    expect(requests[0]!.signal.reason).toBe(error)
  })

  it("gives the same error when fetch honours the signal", async () => {
    const { fetch, requests } = fakeFetch(silentUntilAborted)
    const error = await rejection(instantClient(fetch, { timeout: 30 }).applications.get("CRM-01"))
    expect(error).toBeInstanceOf(NetworkTimeoutError)
    expect(requests).toHaveLength(1)
    expect(requests[0]!.signal.aborted).toBe(true)
  })

  it("counts the reading of the body in the attempt", async () => {
    const stalled = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("[1,"))
      }
    })
    const { fetch, requests } = fakeFetch(new Response(stalled, { status: 200 }))
    const error = await rejection(instantClient(fetch, { timeout: 40 }).functions.tree())
    expect(error).toBeInstanceOf(NetworkTimeoutError)
    expect(requests[0]!.signal.aborted).toBe(true)
  })

  it("applies a call's timeout over the client's", async () => {
    const { fetch } = fakeFetch(silent)
    const client = instantClient(fetch, { timeout: 60_000 })
    const error = await rejection(client.functions.tree({ timeout: 20 }))
    expect(error).toBeInstanceOf(NetworkTimeoutError)
    expect(error.timeout).toBe(20)
  })

  it("defaults to 30 seconds", async () => {
    vi.useFakeTimers()
    try {
      const { fetch, requests } = fakeFetch(silent)
      const call = rejection(instantClient(fetch).functions.tree())
      await vi.advanceTimersByTimeAsync(29_999)
      expect(requests).toHaveLength(1)
      expect(requests[0]!.signal.aborted).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      const error = await call
      expect(error).toBeInstanceOf(NetworkTimeoutError)
      expect(error.timeout).toBe(30_000)
    } finally {
      vi.useRealTimers()
    }
  })

  it("times each attempt anew: a slow first answer does not eat the retry's time", async () => {
    const late = () => new Promise<Response>((resolve) => setTimeout(() => resolve(new Response(null, { status: 503, headers: { "retry-after": "0" } })), 60))
    const { fetch, requests } = fakeFetch(late, late, json({ functionCount: 3 }))
    expect(await instantClient(fetch, { timeout: 100 }).functions.stats()).toEqual({ functionCount: 3 })
    expect(requests).toHaveLength(3)
  })
})

describe("a caller's AbortSignal", () => {
  it("aborts the request with the signal's reason, without retrying", async () => {
    const { fetch, requests } = fakeFetch(silentUntilAborted, json([]))
    const controller = new AbortController()
    const call = instantClient(fetch).functions.tree({ signal: controller.signal })
    const reason = new Error("navigated away")
    setTimeout(() => controller.abort(reason), 10)
    expect(await rejection(call)).toBe(reason)
    expect(requests).toHaveLength(1)
    expect(requests[0]!.signal.aborted).toBe(true)
  })

  it("stops a fetch that ignores its signal too", async () => {
    const { fetch } = fakeFetch(silent)
    const controller = new AbortController()
    const call = instantClient(fetch).functions.tree({ signal: controller.signal })
    setTimeout(() => controller.abort(), 10)
    expect((await rejection(call)).name).toBe("AbortError")
  })

  it("sends nothing when already aborted", async () => {
    const { fetch, requests } = fakeFetch(json([]))
    const error = await rejection(instantClient(fetch).functions.tree({ signal: AbortSignal.abort() }))
    expect(error.name).toBe("AbortError")
    expect(requests).toHaveLength(0)
  })
})
