import { describe, expect, it } from "vitest"
import { bounded, Budget, interruptible, Interrupted, pause, reasonOf } from "./watchdog.js"

// The drills' hard time bound (main.ts): the watchdog's abort cuts what runs at the deadline, and
// nothing starts that is not expected to end before it.
describe("the drills' time budget", () => {
  it("cuts the drill running at the deadline, at once, with the time budget as its reason", async () => {
    const budget = new Budget(Date.now(), 400, 200)
    const stopped: Array<string> = []
    budget.arm((reason) => stopped.push(reason))
    const began = Date.now()
    // A drill that would take 10 s: its pause ends with the signal, and nobody waits for it anyway.
    const drill = pause(10_000, budget.signal).then(() => "done")
    const outcome = await interruptible(drill, budget.signal).catch((error: unknown) => error)
    expect(outcome).toBeInstanceOf(Interrupted)
    expect(Date.now() - began).toBeGreaterThanOrEqual(150)
    expect(Date.now() - began).toBeLessThan(1_000)
    expect(reasonOf(budget.signal)).toBe(`time budget (${400 / 60_000} minutes)`)
    expect(stopped).toHaveLength(1)
    // Stopped once: a signal afterwards changes nothing.
    expect(budget.stop("SIGTERM")).toBe(false)
    expect(reasonOf(budget.signal)).toContain("time budget")
  })

  it("does not wait for what ended before the abort, nor hold a failure of what was cut", async () => {
    const budget = new Budget(Date.now(), 60_000, 1_000)
    expect(await interruptible(Promise.resolve(42), budget.signal)).toBe(42)
    await expect(interruptible(Promise.reject(new Error("refused")), budget.signal)).rejects.toThrow("refused")
    const failingLater = pause(50).then(() => Promise.reject(new Error("after the cut")))
    budget.stop("SIGTERM")
    await expect(interruptible(failingLater, budget.signal)).rejects.toBeInstanceOf(Interrupted)
    // Its rejection comes later and is nobody's: no unhandled rejection fails this test.
    await pause(100)
  })

  it("starts nothing that is not expected to end before the deadline: what the code waits for, then what was measured", () => {
    const budget = new Budget(Date.now(), 100_000, 40_000)
    // 60 s left.
    expect(budget.fits(50_000)).toBe(true)
    expect(budget.fits(70_000)).toBe(false)
    expect(budget.estimate("kill -9 a gateway replica", 35_000)).toBe(35_000)
    budget.record("kill -9 a gateway replica", 20_000)
    budget.record("kill -9 a gateway replica", 10_000)
    // The longest, with a margin of 20 %.
    expect(budget.estimate("kill -9 a gateway replica", 35_000)).toBe(24_000)
    budget.stop("SIGINT")
    expect(budget.fits(1)).toBe(false)
  })

  it("waits a bounded time for a stop that hangs", async () => {
    const began = Date.now()
    expect(await bounded(new Promise(() => undefined), 100)).toBe(false)
    expect(Date.now() - began).toBeLessThan(1_000)
    expect(await bounded(Promise.reject(new Error("failed")), 100)).toBe(true)
    expect(await bounded(undefined, 100)).toBe(true)
  })
})
