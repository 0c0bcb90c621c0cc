import { type WindowState, windowStateOf } from "./RateLimitWindow.js"

/**
 * The timestamps of one key's counted requests, oldest first, in a ring that grows by doubling up
 * to `limit` slots, so that a generous limit costs memory only for keys that use it.
 */
class Log {
  times: Float64Array
  head = 0
  size = 0
  constructor(readonly limit: number) {
    this.times = new Float64Array(Math.min(limit, 8))
  }
  private at(index: number): number {
    return this.times[(this.head + index) % this.times.length]!
  }
  oldest(): number {
    return this.at(0)
  }
  newest(): number {
    return this.at(this.size - 1)
  }
  evictBefore(cutoff: number): void {
    while (this.size > 0 && this.oldest() <= cutoff) {
      this.head = (this.head + 1) % this.times.length
      this.size--
    }
  }
  push(at: number): void {
    if (this.size === this.times.length) {
      const grown = new Float64Array(Math.min(this.limit, this.times.length * 2))
      for (let i = 0; i < this.size; i++) grown[i] = this.at(i)
      this.times = grown
      this.head = 0
    }
    this.times[(this.head + this.size) % this.times.length] = at
    this.size++
  }
}

/**
 * Exact sliding-window log, in process: a request at `t` counts while `now < t + window`. Memory is
 * one ring of at most `limit` timestamps per active key; keys idle for a whole window are swept once per
 * window, so the map only holds keys seen in the last window or two.
 */
export const makeSlidingWindowLog = () => {
  const logs = new Map<string, Log>()
  let lastSweep = Number.NEGATIVE_INFINITY

  const sweep = (nowMs: number, windowMs: number) => {
    if (nowMs - lastSweep < windowMs) return
    lastSweep = nowMs
    for (const [key, log] of logs) if (log.size === 0 || log.newest() <= nowMs - windowMs) logs.delete(key)
  }

  const hit = (key: string, limit: number, windowMs: number, nowMs: number): WindowState => {
    sweep(nowMs, windowMs)
    let log = logs.get(key)
    if (log === undefined || log.limit !== limit) {
      log = new Log(limit)
      logs.set(key, log)
    }
    log.evictBefore(nowMs - windowMs)
    const allowed = log.size < limit
    if (allowed) log.push(nowMs)
    return windowStateOf(allowed, limit, log.size, log.oldest(), windowMs, nowMs)
  }

  /** What `hit` would answer, without counting: a cluster-wide store keeps this log as its fallback and asks it first. */
  const peek = (key: string, limit: number, windowMs: number, nowMs: number): WindowState => {
    const log = logs.get(key)
    if (log === undefined || log.limit !== limit) return { allowed: limit > 0, limit, remaining: limit, resetAtMs: nowMs }
    log.evictBefore(nowMs - windowMs)
    return windowStateOf(log.size < limit, limit, log.size, log.oldest(), windowMs, nowMs)
  }

  return { hit, peek, size: () => logs.size }
}
