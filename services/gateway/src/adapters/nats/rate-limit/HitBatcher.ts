import type { KV, KvEntry } from "@nats-io/kv"
import { applyBatch, type Batch, type BatchResult, type Reservation } from "../../../domain/rate-limit/LocalShare.js"
import type { WindowState } from "../../../domain/rate-limit/RateLimitWindow.js"
import { batchOf, committed, type KeyShare } from "./KeyShare.js"
import { emptyLog, ExactEntries } from "../../../domain/rate-limit/CountedLog.js"
import { decodeStoredLog, encodeStoredLog } from "./StoredLog.js"
import { isConflict } from "./CompareAndSet.js"

/** Reads of a key to learn whether a write whose answer was lost took place. */
const LostAnswerReads = 3

/**
 * A write whose answer was lost and that the reads after it did not find: this replica's unused
 * entries in the key either way, given back at the key's next read once its revision tells which.
 */
interface UnsureRecord {
  /** The revision the write was based on, and its bytes. */
  readonly previousSeq: number
  readonly value: Uint8Array
  readonly ifNotTaken: ReadonlyArray<Reservation>
  readonly ifTaken: ReadonlyArray<Reservation>
  readonly limit: number
  readonly windowMs: number
  readonly nowMs: number
  /** Past this (epoch milliseconds), the entries have left the window: nothing left to give back. */
  readonly dropAfter: number
}

class UnsureWrite extends Error {
  constructor(override readonly cause: unknown, readonly record: Omit<UnsureRecord, "dropAfter">) {
    super(cause instanceof Error ? cause.message : String(cause))
  }
}

/**
 * What the key's latest revision tells of an unsure write: still at the revision it was based on,
 * not taken (so far: it may yet arrive, and the key is then written at once, so that a late arrival
 * fails its compare-and-set), and the entries it gave back are to be given back; holding its bytes,
 * taken, and the room it reserved is; a revision older than its base, a read from a server that
 * lags, tells nothing yet; another write since, and the question cannot be answered any more.
 */
type Verdict =
  | { readonly taken: boolean; readonly release: ReadonlyArray<Reservation> }
  | "stale"
  | "lost"

const verdictOf = (record: UnsureRecord, entry: KvEntry | null): Verdict => {
  const revision = entry?.revision ?? 0
  if (revision === record.previousSeq) return { taken: false, release: record.ifNotTaken }
  if (revision < record.previousSeq) return "stale"
  if (entry !== null && Buffer.from(entry.value).equals(record.value)) return { taken: true, release: record.ifTaken }
  return "lost"
}

interface Waiter {
  readonly limit: number
  readonly windowMs: number
  readonly nowMs: number
  abandoned: boolean
  readonly resolve: (state: WindowState) => void
  readonly reject: (error: unknown) => void
}

interface Queue {
  waiters: Array<Waiter>
  /** Whether this replica has something of the key's share to write: requests admitted locally, a quiet key's reservations. */
  settle: boolean
}

export interface HitBatcherOptions {
  /** Reads and compare-and-sets of one batch before it gives up on a key others keep writing. */
  readonly maxAttempts: number
  /**
   * Writes a key's next revision if its latest is still `previousSeq`, and answers it; a conflict
   * throws (CompareAndSet.ts: `kv.put` with `previousSeq` is not exclusive on every server).
   */
  readonly compareAndSet: (kvKey: string, value: Uint8Array, previousSeq: number) => Promise<number>
  readonly replicas: number
  /** How long a reservation may be used, and how long a key stays quiet before its reservations are given back. */
  readonly lifetimeMs: number
  /** Whether to write logs with their older entries grouped (bounded), which only this version reads whole. */
  readonly grouped: boolean
  /** A batch with no request waiting on it failed: the bucket did not answer, or others kept writing. */
  readonly onSettleFailure: (error: unknown) => void
}

/**
 * Counts hits in the sliding-window logs of one bucket, by read and compare-and-set, starting over
 * on a conflict up to `maxAttempts` times, and admits a key's requests against the room this replica
 * reserved in its log with no round trip (domain/LocalShare.ts).
 *
 * A key has at most one read and compare-and-set in flight in this process: requests that need an
 * exact answer, and what the requests admitted locally meanwhile leave to write, wait and go
 * together in the next one. A busy token thus costs two round trips per batch rather than per
 * request, off the requests' path while its share lasts, and its share is written back only once
 * half spent or about to lapse (KeyShare.ts `wantsWrite`), and this process never races itself on a
 * key, so conflicts come only from other replicas. A hit whose `signal` aborts before its batch
 * starts is left out of it.
 *
 * A batch that surely was not written (the key could not be read, or others won every
 * compare-and-set) leaves the share as it was before the batch (`KeyShare.abort`): its reservations
 * are still in the bucket. A write whose answer is lost is looked for in the key (`tookPlace`):
 * found, the batch stands; not found, the share keeps what the bucket holds either way
 * (`KeyShare.unsure`), and the key's next read tells whether the write took place, and gives back
 * the entries it left unused (`verdictOf`). Under a loaded machine's late timers either of a batch's
 * two round trips may time out, and forgetting the share then held its room idle for a minute.
 * Nothing admitted is left uncounted: each request admitted locally holds an entry of the log from
 * before its admission, and is at worst counted at its reservation's stamp rather than its own time.
 */
export const makeHitBatcher = (kv: KV, options: HitBatcherOptions) => {
  const queues = new Map<string, Queue>()
  const shares = new Map<string, KeyShare>()
  const unsure = new Map<string, UnsureRecord>()
  /** Keys whose `remind` is pending: one at a time, whatever the failures meanwhile. */
  const reminding = new Set<string>()
  let closed = false

  /**
   * Counts `batch` in the key, and gives back what an unsure earlier write left there once the key's
   * latest revision tells whether it took place. A failure throws `UnsureWrite` when the write may
   * have been taken all the same; any other error means it surely was not.
   */
  const write = async (kvKey: string, batch: Batch): Promise<BatchResult> => {
    for (let attempt = 1;; attempt++) {
      const entry = await kv.get(kvKey)
      const stored = entry !== null && entry.operation === "PUT" ? decodeStoredLog(entry.value) : undefined
      const earlier = unsure.get(kvKey)
      const verdict = earlier === undefined ? undefined : verdictOf(earlier, entry)
      if (verdict === "lost") unsure.delete(kvKey)
      const recovered = typeof verdict === "object" ? verdict.release : []
      const counted = recovered.length === 0 ? batch : { ...batch, release: [...batch.release, ...recovered] }
      // As the in-process log: a key counted against another limit starts over.
      const result = applyBatch(stored?.limit === batch.limit ? stored.log : emptyLog(), counted)
      // Refusals are not counted, and expiry needs no write: the window moves on by itself. But for
      // an unsure write not found: the key is written all the same, which that write, should it
      // arrive late, can no longer overwrite.
      if (!result.changed && !(typeof verdict === "object" && !verdict.taken)) {
        if (verdict !== "stale") unsure.delete(kvKey)
        return result
      }
      const value = encodeStoredLog({ limit: batch.limit, log: result.log }, Number.isFinite(batch.groupAfter))
      const previousSeq = entry?.revision ?? 0
      try {
        await options.compareAndSet(kvKey, value, previousSeq)
        unsure.delete(kvKey)
        return result
      } catch (error) {
        if (isConflict(error)) {
          if (attempt >= options.maxAttempts) throw error
          continue
        }
        if (await tookPlace(kvKey, value, previousSeq)) {
          unsure.delete(kvKey)
          return result
        }
        throw new UnsureWrite(error, {
          previousSeq,
          value,
          ifNotTaken: recovered,
          ifTaken: result.reserved === undefined ? [] : [result.reserved],
          limit: batch.limit,
          windowMs: batch.windowMs,
          nowMs: batch.nowMs
        })
      }
    }
  }

  /**
   * Whether a write whose answer was lost (a timeout of a slow server, a connection broken after it
   * was sent) was taken all the same: the key's latest revision is past the one it was based on and
   * holds exactly its bytes (another replica's log is never byte for byte the same, and if it were,
   * the log would be what this batch counted). Without this, the room it reserved would be held by
   * nobody until the key's next write found it.
   */
  const tookPlace = async (kvKey: string, value: Uint8Array, previousSeq: number) => {
    for (let attempt = 1; attempt <= LostAnswerReads; attempt++) {
      try {
        const entry = await kv.get(kvKey)
        return entry !== null && entry.revision > previousSeq && Buffer.from(entry.value).equals(value)
      } catch {
        // No answer again: asked once more, then taken as unknown.
      }
    }
    return false
  }

  /**
   * Asks for a write of a key whose unsure write left entries nobody uses, so that they are given
   * back even if the key is not asked for again; past the window they no longer count, and the
   * record is dropped.
   */
  const remind = (kvKey: string) => {
    if (reminding.has(kvKey)) return
    reminding.add(kvKey)
    setTimeout(() => {
      reminding.delete(kvKey)
      const record = unsure.get(kvKey)
      if (closed || record === undefined) return
      if (Date.now() > record.dropAfter) unsure.delete(kvKey)
      else enqueue(kvKey, undefined)
    }, options.lifetimeMs).unref()
  }

  const forget = (kvKey: string, share: KeyShare) => {
    clearTimeout(share.timer)
    if (shares.get(kvKey) === share) shares.delete(kvKey)
  }

  const enqueue = (kvKey: string, waiter: Waiter | undefined) => {
    const queue = queues.get(kvKey)
    if (queue !== undefined) {
      if (waiter === undefined) queue.settle = true
      else queue.waiters.push(waiter)
      return
    }
    queues.set(kvKey, { waiters: waiter === undefined ? [] : [waiter], settle: waiter === undefined })
    void run(kvKey)
  }

  // Reservations of a key nobody asks for any more would hold others' room until they leave the window.
  const keep = (kvKey: string, share: KeyShare) => {
    clearTimeout(share.timer)
    if (share.empty) return forget(kvKey, share)
    shares.set(kvKey, share)
    if (!share.holding) return
    share.timer = setTimeout(() => {
      if (shares.get(kvKey) !== share || closed) return
      share.idle = !share.busy
      enqueue(kvKey, undefined)
    }, options.lifetimeMs)
    share.timer.unref()
  }

  const run = async (kvKey: string) => {
    for (;;) {
      const queue = queues.get(kvKey)!
      // One batch counts against one limit: a waiter with another (a key whose limit changed) waits for the next.
      const first = queue.waiters.find((waiter) => !waiter.abandoned)
      const batch: Array<Waiter> = []
      const later: Array<Waiter> = []
      for (const waiter of queue.waiters) {
        if (waiter.abandoned) continue
        if (waiter.limit === first!.limit && waiter.windowMs === first!.windowMs) batch.push(waiter)
        else later.push(waiter)
      }
      queue.waiters = later
      const settle = queue.settle
      queue.settle = false
      if (batch.length === 0 && !settle) {
        queues.delete(kvKey)
        return
      }
      let share = shares.get(kvKey)
      if (share !== undefined && first !== undefined && !share.fits(first.limit, first.windowMs)) {
        forget(kvKey, share)
        share = undefined
      }
      const earlier = unsure.get(kvKey)
      // A settle asked for by a request that an earlier batch already counted.
      if (first === undefined && share === undefined && earlier === undefined) continue
      const input = share === undefined && first === undefined
        ? givingBack(earlier!)
        : batchOf(share, batch.map((waiter) => waiter.nowMs), settingsOf(first?.limit ?? share!.limit, first?.windowMs ?? share!.windowMs))
      if (first === undefined && earlier === undefined && input.release.length === 0 && input.retimed.length === 0) {
        if (share!.empty) forget(kvKey, share!)
        continue
      }
      try {
        const result = await write(kvKey, input)
        if (!closed) keep(kvKey, committed(share, input, result))
        batch.forEach((waiter, index) => waiter.resolve(result.states[index]!))
      } catch (thrown) {
        const error = thrown instanceof UnsureWrite ? thrown.cause : thrown
        if (thrown instanceof UnsureWrite) {
          const givenBack = share?.unsure() ?? []
          if (!closed) {
            unsure.set(kvKey, { ...thrown.record, ifNotTaken: [...thrown.record.ifNotTaken, ...givenBack], dropAfter: Date.now() + thrown.record.windowMs + options.lifetimeMs })
            remind(kvKey)
          }
        } else {
          share?.abort()
          if (!closed && unsure.has(kvKey)) remind(kvKey)
        }
        if (share !== undefined && !closed) keep(kvKey, share)
        for (const waiter of batch) waiter.reject(error)
        if (batch.length === 0 && !closed) options.onSettleFailure(error)
      }
    }
  }

  const settingsOf = (limit: number, windowMs: number) => ({
    limit,
    windowMs,
    replicas: options.replicas,
    lifetimeMs: options.lifetimeMs,
    groupAfter: options.grouped ? ExactEntries : Number.POSITIVE_INFINITY
  })

  /** A batch that only gives back what an unsure write left, for a key this replica holds nothing of any more. */
  const givingBack = (record: UnsureRecord): Batch => ({
    ...settingsOf(record.limit, record.windowMs),
    release: [],
    retimed: [],
    held: [],
    requests: [],
    nowMs: record.nowMs,
    reserve: false
  })

  /** Admits a request against this replica's share of the key, or answers `undefined`: then `hit` decides. */
  const admitLocally = (kvKey: string, limit: number, windowMs: number, nowMs: number): WindowState | undefined => {
    const share = shares.get(kvKey)
    if (share === undefined || !share.fits(limit, windowMs)) return undefined
    const state = share.admit(nowMs)
    if (state !== undefined && share.wantsWrite(nowMs)) enqueue(kvKey, undefined)
    return state
  }

  const hit = (kvKey: string, limit: number, windowMs: number, nowMs: number, signal: AbortSignal) =>
    new Promise<WindowState>((resolve, reject) => {
      const waiter: Waiter = { limit, windowMs, nowMs, abandoned: false, resolve, reject }
      // A request that gave up waiting is counted in process; it must not be counted here as well.
      signal.addEventListener("abort", () => {
        waiter.abandoned = true
      }, { once: true })
      enqueue(kvKey, waiter)
    })

  /** Ends the session's batches: a new session starts with no share, its bucket may be a new one. */
  const close = () => {
    closed = true
    for (const share of shares.values()) clearTimeout(share.timer)
    shares.clear()
    unsure.clear()
    reminding.clear()
  }

  return { admitLocally, hit, close }
}
