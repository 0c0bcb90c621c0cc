import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { makeSlidingWindowLog } from "../../src/domain/rate-limit/SlidingWindowLog.js"
import { RateLimitStoreMemory } from "../../src/adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { RecentlyValidTokensMemory } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemory } from "../../src/adapters/memory/rate-limit/SpentAddressesMemory.js"
import { rateLimitHeaders, resetSeconds, retryAfterSeconds } from "../../src/domain/rate-limit/RateLimitWindow.js"
import { countRequest } from "../../src/usecases/rate-limit/RateLimiting.js"
import { testConfigLayer } from "../support/testConfig.js"

const W = 60_000

// The RateLimitStore contract, which this log meets, is in RateLimitStore.contract.test.ts; here, its own workings.
describe("sliding-window log", () => {
  it("wraps its ring correctly over many windows", () => {
    const log = makeSlidingWindowLog()
    let allowed = 0
    // One request every 100 ms for 10 minutes against 180/min: exactly 180 per any 60 s.
    for (let t = 0; t < 600_000; t += 100) if (log.hit("k", 180, W, t).allowed) allowed++
    // Windows open at 0, then each slot frees 60 s after use: 180 allowed per 60 s, 10 windows.
    expect(allowed).toBe(1800)
  })

  it("agrees with a naive list of timestamps on any sequence of requests (ring growth and wrap included)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.integer({ min: 0, max: 9_000 }), { maxLength: 300 }), (limit, gaps) => {
        const log = makeSlidingWindowLog()
        const window = 10_000
        let counted: Array<number> = []
        let now = 0
        for (const gap of gaps) {
          now += gap
          counted = counted.filter((t) => t > now - window)
          const allowed = counted.length < limit
          if (allowed) counted.push(now)
          expect(log.hit("k", limit, window, now)).toEqual({
            allowed,
            limit,
            remaining: limit - counted.length,
            resetAtMs: counted.length > 0 ? counted[0]! + window : now
          })
        }
      })
    )
  })

  it("evicts keys idle for a whole window", () => {
    const log = makeSlidingWindowLog()
    log.hit("old", 3, W, 0)
    log.hit("fresh", 3, W, 30_000)
    expect(log.size()).toBe(2)
    log.hit("fresh", 3, W, 65_000)
    expect(log.size()).toBe(1)
  })
})

describe("rate-limit headers", () => {
  it("rounds the reset up to whole seconds and derives Retry-After from it", () => {
    const state = { allowed: false, limit: 180, remaining: 0, resetAtMs: 1_700_000_060_300 }
    expect(resetSeconds(state)).toBe(1_700_000_061)
    expect(retryAfterSeconds(state, 1_700_000_000_500)).toBe(61) // ceil(1700000061 - 1700000000.5)
    expect(retryAfterSeconds(state, 1_700_000_060_999)).toBe(1) // never below 1
    expect(rateLimitHeaders(state)).toEqual({ "x-ratelimit-limit": "180", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000061" })
  })

  it("reports now as the reset of an empty window", () => {
    expect(resetSeconds({ allowed: true, limit: 3, remaining: 3, resetAtMs: 5_000 })).toBe(5)
  })
})

describe("countRequest (with the test clock)", () => {
  const layer = Layer.mergeAll(RateLimitStoreMemory, SpentAddressesMemory, RecentlyValidTokensMemory, testConfigLayer())

  it.effect("applies the per-token limit to tokens and the per-address limit to anonymous callers", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(10_000)
      for (let i = 0; i < 5; i++) expect((yield* countRequest({ patId: "p1" })).state.allowed).toBe(true)
      const refused = yield* countRequest({ patId: "p1" })
      expect(refused.state).toEqual({ allowed: false, limit: 5, remaining: 0, resetAtMs: 70_000 })
      expect(retryAfterSeconds(refused.state, refused.nowMs)).toBe(60)

      for (let i = 0; i < 3; i++) expect((yield* countRequest({ clientIp: "10.0.0.1" })).state.allowed).toBe(true)
      expect((yield* countRequest({ clientIp: "10.0.0.1" })).state.allowed).toBe(false)

      yield* TestClock.adjust("59500 millis")
      const later = yield* countRequest({ patId: "p1" })
      expect(later.state.allowed).toBe(false)
      expect(retryAfterSeconds(later.state, later.nowMs)).toBe(1)
      yield* TestClock.adjust("500 millis")
      // All five of t=10000 leave the window at 70000 sharp.
      expect((yield* countRequest({ patId: "p1" })).state).toEqual({ allowed: true, limit: 5, remaining: 4, resetAtMs: 130_000 })
    }).pipe(Effect.provide(layer)))
})
