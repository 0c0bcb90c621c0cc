import type { KV } from "nats"
import { type WindowState, windowStateOf } from "../../domain/RateLimitWindow.js"
import { StoredLog } from "./StoredLog.js"

/** JetStream's "wrong last sequence": another replica wrote the key since it was read. */
const WrongLastSequence = 10071

interface Waiter {
  readonly limit: number
  readonly windowMs: number
  readonly nowMs: number
  abandoned: boolean
  readonly resolve: (state: WindowState) => void
  readonly reject: (error: unknown) => void
}

/**
 * Counts hits in the sliding-window logs of one bucket, by read and compare-and-set, starting over
 * on a conflict up to `maxAttempts` times. Hits of a key that arrive while a read and
 * compare-and-set of that key is in flight wait and go together in the next one: a busy token costs
 * two round trips per batch rather than per request, and this process never races itself on a key,
 * so conflicts come only from other replicas. A hit whose `signal` aborts before its batch starts
 * is left out of it.
 */
export const makeHitBatcher = (kv: KV, maxAttempts: number) => {
  const queues = new Map<string, Array<Waiter>>()

  const apply = async (kvKey: string, batch: ReadonlyArray<Waiter>): Promise<Array<WindowState>> => {
    for (let attempt = 1;; attempt++) {
      const entry = await kv.get(kvKey)
      let log = (entry !== null && entry.operation === "PUT" ? StoredLog.decode(entry.value) : undefined) ?? new StoredLog(batch[0]!.limit)
      let counted = false
      const states: Array<WindowState> = []
      for (const waiter of batch) {
        // As the in-process log: a key counted against another limit starts over.
        if (waiter.limit !== log.limit) log = new StoredLog(waiter.limit)
        log.evictThrough(waiter.nowMs - waiter.windowMs)
        const allowed = log.size < log.limit
        if (allowed) {
          log.push(waiter.nowMs)
          counted = true
        }
        states.push(windowStateOf(allowed, log.limit, log.size, log.oldest, waiter.windowMs, waiter.nowMs))
      }
      // Refusals are not counted, and expiry needs no write: the window moves on by itself.
      if (!counted) return states
      try {
        await kv.put(kvKey, log.encode(), { previousSeq: entry?.revision ?? 0 })
        return states
      } catch (error) {
        const code = (error as { api_error?: { err_code?: number } } | null)?.api_error?.err_code
        if (code !== WrongLastSequence || attempt >= maxAttempts) throw error
      }
    }
  }

  const run = async (kvKey: string) => {
    for (;;) {
      const waiting = queues.get(kvKey)!
      if (waiting.length === 0) {
        queues.delete(kvKey)
        return
      }
      queues.set(kvKey, [])
      const batch = waiting.filter((waiter) => !waiter.abandoned)
      if (batch.length === 0) continue
      try {
        const states = await apply(kvKey, batch)
        batch.forEach((waiter, index) => waiter.resolve(states[index]!))
      } catch (error) {
        for (const waiter of batch) waiter.reject(error)
      }
    }
  }

  const hit = (kvKey: string, limit: number, windowMs: number, nowMs: number, signal: AbortSignal) =>
    new Promise<WindowState>((resolve, reject) => {
      const waiter: Waiter = { limit, windowMs, nowMs, abandoned: false, resolve, reject }
      // A request that gave up waiting is counted in process; it must not be counted here as well.
      signal.addEventListener("abort", () => {
        waiter.abandoned = true
      }, { once: true })
      const queue = queues.get(kvKey)
      if (queue !== undefined) {
        queue.push(waiter)
        return
      }
      queues.set(kvKey, [waiter])
      void run(kvKey)
    })

  return { hit }
}
