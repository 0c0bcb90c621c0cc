import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { restartForever } from "../../src/runtime/Supervision.js"

describe("restartForever", () => {
  it.effect("starts a loop again after a failure, a defect or an end, a pause later each time, until interrupted", () =>
    Effect.gen(function*() {
      const runs: Array<string> = []
      const outcomes = [Effect.fail("refused"), Effect.die(new Error("rollback on a lost connection")), Effect.void, Effect.never]
      const loop = Effect.suspend(() => {
        runs.push(`run ${runs.length + 1}`)
        return outcomes[runs.length - 1]!
      })
      const fiber = yield* Effect.forkChild(restartForever(loop, "loop stopped; restarting", "2 seconds"))
      yield* TestClock.adjust("1 second")
      expect(runs).toEqual(["run 1"])
      yield* TestClock.adjust("1 second")
      expect(runs).toEqual(["run 1", "run 2"])
      // The defect of the second run is no end: two seconds later, the third.
      yield* TestClock.adjust("2 seconds")
      expect(runs).toEqual(["run 1", "run 2", "run 3"])
      yield* TestClock.adjust("2 seconds")
      expect(runs).toHaveLength(4)
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust("1 minute")
      expect(runs).toHaveLength(4)
    }))
})
