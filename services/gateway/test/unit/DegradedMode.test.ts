import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeDegradedMode } from "../../src/adapters/nats/rate-limit/DegradedCounting.js"

const options = { bucket: "limits", replicas: 3, exactAfterMs: 1_000 }

describe("degraded mode of the rate-limit store", () => {
  it.effect("stays degraded while the bucket has not answered since the last miss, however long ago that miss was", () =>
    Effect.gen(function*() {
      const mode = yield* makeDegradedMode(options)
      yield* mode.missed(new Error("no answer within 300 ms"))
      expect((yield* mode.condition(true)).degraded).toBe(true)
      // The NATS client keeps its session while it reconnects: connected, yet nothing answered.
      yield* TestClock.adjust("1 hour")
      expect(yield* mode.condition(true)).toMatchObject({ degraded: true, reason: "no answer within 300 ms" })
    }))

  it.effect("ends once the bucket has answered and the last miss is exactAfter old, and not before", () =>
    Effect.gen(function*() {
      const mode = yield* makeDegradedMode(options)
      yield* mode.missed(new Error("no answer"))
      yield* TestClock.adjust("500 millis")
      yield* mode.answered
      expect((yield* mode.condition(true)).degraded).toBe(true)
      yield* TestClock.adjust("500 millis")
      expect(yield* mode.condition(true)).toEqual({ degraded: false, store: "jetstream", replicas: 3 })
    }))

  it.effect("a miss after an answer starts the wait again", () =>
    Effect.gen(function*() {
      const mode = yield* makeDegradedMode(options)
      yield* mode.missed(new Error("first"))
      yield* mode.answered
      yield* TestClock.adjust("900 millis")
      yield* mode.missed(new Error("second"))
      yield* TestClock.adjust("900 millis")
      yield* mode.answered
      expect((yield* mode.condition(true)).degraded).toBe(true)
      yield* TestClock.adjust("100 millis")
      expect((yield* mode.condition(true)).degraded).toBe(false)
    }))

  it.effect("is degraded without a session, whatever answered before", () =>
    Effect.gen(function*() {
      const mode = yield* makeDegradedMode(options)
      expect((yield* mode.condition(true)).degraded).toBe(false)
      expect(yield* mode.condition(false)).toMatchObject({ degraded: true, reason: "not connected to NATS" })
    }))
})
