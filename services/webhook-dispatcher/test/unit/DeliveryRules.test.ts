import { describe, expect, it } from "vitest"
import { disablesAt, isSuccess, nextStep, wakeupWaitMs } from "../../src/domain/DeliveryRules.js"
import { parseDuration, parseSchedule } from "../../src/domain/Durations.js"

const schedule = [60_000, 300_000, 1_500_000, 7_200_000, 36_000_000, 180_000_000]

describe("the retry schedule", () => {
  it("retries after each delay in turn, then gives up: 7 POSTs in all", () => {
    const steps = [1, 2, 3, 4, 5, 6, 7].map((attempt) => nextStep(false, attempt, schedule))
    expect(steps).toEqual([
      ...schedule.map((delayMs) => ({ _tag: "RetryAfter", delayMs })),
      { _tag: "Exhausted" }
    ])
    expect(nextStep(true, 3, schedule)).toEqual({ _tag: "Succeeded" })
  })

  it("counts only 2xx as success: a redirect or any other status is a failure", () => {
    expect([199, 200, 204, 299, 300, 302, 404, 500, undefined].map(isSuccess)).toEqual([false, true, true, true, false, false, false, false, false])
  })

  it("disables at the threshold, not before, and past it when the threshold was lowered", () => {
    expect([9, 10, 11].map((count) => disablesAt(count, 10))).toEqual([false, true, true])
  })
})

describe("durations in settings", () => {
  it("reads the product's schedule and the units ms, s, m, h", () => {
    expect(parseSchedule("1m,5m,25m,2h,10h,50h")).toEqual(schedule)
    expect(parseSchedule(" 1s, 250ms ,2h")).toEqual([1_000, 250, 7_200_000])
    expect(parseDuration("10s")).toBe(10_000)
  })

  it("refuses what is not a whole number with one unit, and empty or zero delays", () => {
    for (const text of ["", "1m,,5m", "1.5m", "5", "1d", "m", "-1s", "1m 5m", "10 s"]) expect(typeof parseSchedule(text), text).toBe("string")
    expect(parseSchedule("0s")).toBe("'0s' must be longer than zero")
  })
})

describe("retry wake-ups", () => {
  it("wait out even the last millisecond before their time, and none after it", () => {
    expect(wakeupWaitMs(10_000, 9_999)).toBe(1)
    expect(wakeupWaitMs(10_000, 9_980)).toBe(20)
    expect(wakeupWaitMs(10_000, 10_000)).toBe(0)
    expect(wakeupWaitMs(10_000, 12_000)).toBe(0)
  })
})
