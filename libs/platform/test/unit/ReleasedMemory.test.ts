import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { readFileSync } from "node:fs"
import { collectCompacting, collectYoung, makeReleaseCollector, releaseNow } from "../../src/runtime/index.js"

/** A collector whose plain and quiet collections are counted apart. */
const withCompacting = (options: { readonly minIntervalMs: number }) => {
  const collect = vi.fn()
  const compacting = vi.fn()
  const released = makeReleaseCollector({ thresholdBytes: 100, minIntervalMs: options.minIntervalMs, quiet: { ms: 5_000, minBytes: 20, collect: compacting }, collect, now: () => Date.now() })
  return { released, calls: () => ({ plain: collect.mock.calls.length, compacting: compacting.mock.calls.length }) }
}

describe("makeReleaseCollector", () => {
  beforeEach(() => void vi.useFakeTimers())
  afterEach(() => void vi.useRealTimers())

  it("collects once the threshold is released, later than the cache's own call, at most once per interval", () => {
    const collect = vi.fn()
    const released = makeReleaseCollector({ thresholdBytes: 100, minIntervalMs: 10_000, collect, now: () => Date.now() })
    released(60)
    vi.advanceTimersByTime(1_000)
    expect(collect).not.toHaveBeenCalled()
    released(40)
    expect(collect).not.toHaveBeenCalled()
    vi.advanceTimersByTime(0)
    expect(collect).toHaveBeenCalledTimes(1)
    // Released again at once: the next waits for the interval, however much comes meanwhile.
    released(500)
    released(500)
    vi.advanceTimersByTime(9_000)
    expect(collect).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(1_000)
    expect(collect).toHaveBeenCalledTimes(2)
    // What was counted before a collection does not count towards the next.
    released(99)
    vi.advanceTimersByTime(60_000)
    expect(collect).toHaveBeenCalledTimes(2)
  })

  it("with quiet, collects what was released short of the threshold once the releases stop, once, when it is enough", () => {
    const options = { thresholdBytes: 100, minIntervalMs: 10_000, quiet: { ms: 5_000, minBytes: 20 }, now: () => Date.now() }
    // Less than minBytes, then quiet: nothing (a lone small entry expiring is not worth it).
    const never = vi.fn()
    makeReleaseCollector({ ...options, collect: never })(19)
    vi.advanceTimersByTime(60_000)
    expect(never).not.toHaveBeenCalled()
    const collect = vi.fn()
    const released = makeReleaseCollector({ ...options, collect })
    // Releases every 3 s: never quiet for 5 s, and short of the threshold, so nothing yet.
    for (let i = 0; i < 5; i++) {
      released(10)
      vi.advanceTimersByTime(3_000)
    }
    expect(collect).not.toHaveBeenCalled()
    // Quiet from the last release (12 s) for 5 s: collected then (a timer's 0 ms is 1 in Node).
    vi.advanceTimersByTime(1_999)
    expect(collect).not.toHaveBeenCalled()
    vi.advanceTimersByTime(2)
    expect(collect).toHaveBeenCalledTimes(1)
    // Released again at once: quiet 5 s later, but the next collection waits for the interval.
    released(20)
    vi.advanceTimersByTime(9_998)
    expect(collect).toHaveBeenCalledTimes(1)
    vi.advanceTimersByTime(2)
    expect(collect).toHaveBeenCalledTimes(2)
    // Nothing released since: no more collections, however long it stays quiet.
    vi.advanceTimersByTime(60_000)
    expect(collect).toHaveBeenCalledTimes(2)
  })

  it("runs the quiet collection's own kind once quiet, even after a collection for the threshold", () => {
    const { released, calls } = withCompacting({ minIntervalMs: 1_000 })
    // Over the threshold: the plain collection, at once (a timer's 0 ms is 1 in Node).
    released(100)
    vi.advanceTimersByTime(1)
    expect(calls()).toEqual({ plain: 1, compacting: 0 })
    // Quiet: what was released since the last quiet collection is given back by its own kind.
    vi.advanceTimersByTime(5_000)
    expect(calls()).toEqual({ plain: 1, compacting: 1 })
    vi.advanceTimersByTime(60_000)
    expect(calls()).toEqual({ plain: 1, compacting: 1 })
  })

  it("with lastUsedAt, waits until nothing was released nor used for quiet.ms", () => {
    const collect = vi.fn()
    let lastUsedAt = Number.NEGATIVE_INFINITY
    const released = makeReleaseCollector({ thresholdBytes: 100, minIntervalMs: 1_000, quiet: { ms: 5_000, minBytes: 20, lastUsedAt: () => lastUsedAt }, collect, now: () => Date.now() })
    released(50)
    // Used every 3 s for 12 s, nothing more released: not quiet.
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(3_000)
      lastUsedAt = Date.now()
    }
    vi.advanceTimersByTime(4_900)
    expect(collect).not.toHaveBeenCalled()
    vi.advanceTimersByTime(200)
    expect(collect).toHaveBeenCalledTimes(1)
  })

  it("with idleBelow, waits while the event loop is busy over the quiet time", () => {
    const collect = vi.fn()
    // The first reading is taken as the releases start (a window that began long before).
    const readings = [0.9, 0.4, 0.3, 0.01]
    const released = makeReleaseCollector({ thresholdBytes: 100, minIntervalMs: 1_000, quiet: { ms: 5_000, minBytes: 20, idleBelow: 0.05 }, collect, now: () => Date.now(), utilization: () => readings.shift() ?? 0 })
    released(50)
    // Busy at the checks at 5 s and 10 s; idle at 15 s.
    vi.advanceTimersByTime(10_100)
    expect(collect).not.toHaveBeenCalled()
    vi.advanceTimersByTime(5_000)
    expect(collect).toHaveBeenCalledTimes(1)
    expect(readings).toEqual([])
  })

  it("asks again later when a collection for the threshold is still waiting at the quiet check", () => {
    const { released, calls } = withCompacting({ minIntervalMs: 8_000 })
    released(100)
    vi.advanceTimersByTime(1)
    // Over the threshold again within the interval: that collection waits until 8 s.
    released(100)
    vi.advanceTimersByTime(5_000)
    expect(calls()).toEqual({ plain: 1, compacting: 0 })
    vi.advanceTimersByTime(3_000)
    expect(calls()).toEqual({ plain: 2, compacting: 0 })
    // Asked again 5 s after the first check, and run once the interval from the last has passed (16 s).
    vi.advanceTimersByTime(7_000)
    expect(calls()).toEqual({ plain: 2, compacting: 0 })
    vi.advanceTimersByTime(1_100)
    expect(calls()).toEqual({ plain: 2, compacting: 1 })
  })
})

describe("the full collection it runs", () => {
  it("frees array buffers that nothing references any more", async () => {
    let body: Uint8Array | undefined = new Uint8Array(32 * 1024 * 1024).fill(1)
    const kept = new WeakRef(body)
    body = undefined
    // A new macrotask: the buffer is no longer referenced from this one's stack.
    await new Promise((resolve) => setTimeout(resolve, 0))
    const released = makeReleaseCollector({ thresholdBytes: 1, minIntervalMs: 0 })
    released(32 * 1024 * 1024)
    for (let i = 0; i < 100 && kept.deref() !== undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(kept.deref()).toBeUndefined()
  })
})

/** Waits until `measure` reads the same twice 10 ms apart (the sweeping of freed buffers may finish later), at most half a second. */
const settled = async (measure: () => number) => {
  for (let i = 0, last = -1; i < 50 && measure() !== last; i++) {
    last = measure()
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("the compacting collection", () => {
  it("gives the pages of a freed old generation back to the system, which a plain full collection keeps", async () => {
    const anonymous = () => Number(/RssAnon:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) * 1024
    // 64 MB of small objects that reach the old generation, then let go.
    let kept: Array<{ readonly i: number; readonly s: string }> | undefined = Array.from({ length: 600_000 }, (_, i) => ({ i, s: `object ${i}` }))
    await new Promise((resolve) => setTimeout(resolve, 0))
    kept = undefined
    const heldBefore = anonymous()
    collectCompacting()
    // It runs as a task of its own: waited for, at most two seconds.
    for (let i = 0; i < 200 && heldBefore - anonymous() < 32 * 1024 * 1024; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(kept).toBeUndefined()
    expect(heldBefore - anonymous()).toBeGreaterThan(32 * 1024 * 1024)
  })
})

describe("the young collection", () => {
  it("frees the array buffers of chunks that died young, as a proxy's copied answer leaves them", async () => {
    const held = () => process.memoryUsage().arrayBuffers
    // Chunks as a socket's reads make them, 64 KiB each, copied on and dropped: 16 MiB in all.
    const allocate = () => {
      let total = 0
      for (let i = 0; i < 256; i++) total += Buffer.alloc(64 * 1024, 1).length
      return total
    }
    // Nothing left of the files this worker ran before: a collection of their garbage while the
    // chunks are allocated would otherwise count against them (CI once measured -16 MB "dropped").
    setFlagsFromString("--expose-gc")
    ;(runInNewContext("gc") as () => void)()
    await settled(held)
    const before = held()
    expect(allocate()).toBe(16 * 1024 * 1024)
    const dropped = held() - before
    collectYoung()
    // The sweeping of the freed buffers may finish on a later turn.
    for (let i = 0; i < 50 && held() - before > dropped / 4; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(dropped).toBeGreaterThan(8 * 1024 * 1024)
    expect(held() - before).toBeLessThan(dropped / 4)
  })
})

describe("releaseNow", () => {
  it("gives a used piece's memory back at once, without a collection", async () => {
    const held = () => process.memoryUsage().arrayBuffers
    setFlagsFromString("--expose-gc")
    ;(runInNewContext("gc") as () => void)()
    await settled(held)
    const before = held()
    // 16 MiB of 256 KiB pieces, each made, used and released: no more than one is held at a time.
    let most = 0
    for (let i = 0; i < 64; i++) {
      const piece = Buffer.allocUnsafe(256 * 1024).fill(i)
      most = Math.max(most, held() - before)
      releaseNow(piece)
      expect(piece.byteLength).toBe(0)
    }
    expect(most).toBeLessThan(2 * 256 * 1024)
    expect(held() - before).toBeLessThan(256 * 1024)
  })

  it("leaves alone what its view does not cover whole: a slice of Node's shared pool, a part of a larger buffer", () => {
    const pooled = Buffer.from("a small piece")
    const neighbour = Buffer.from("its neighbour in the pool")
    expect(pooled.buffer).toBe(neighbour.buffer)
    releaseNow(pooled)
    expect(pooled.toString()).toBe("a small piece")
    expect(neighbour.toString()).toBe("its neighbour in the pool")
    const whole = Buffer.alloc(64 * 1024, 1)
    const part = whole.subarray(1024)
    releaseNow(part)
    expect(whole.byteLength).toBe(64 * 1024)
    expect(part[0]).toBe(1)
    // Released twice: the second does nothing.
    releaseNow(whole)
    releaseNow(whole)
    expect(whole.byteLength).toBe(0)
  })
})
