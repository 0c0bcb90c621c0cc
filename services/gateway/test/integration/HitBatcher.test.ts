import { afterAll, describe, expect, it } from "vitest"
import { connect } from "@nats-io/transport-node"
import { jetstream } from "@nats-io/jetstream"
import { type KV, Kvm } from "@nats-io/kv"
import { StorageType } from "@nats-io/jetstream"
import { isConflict, makeCompareAndSet } from "../../src/adapters/nats/rate-limit/CompareAndSet.js"
import { makeHitBatcher } from "../../src/adapters/nats/rate-limit/HitBatcher.js"
import { servers, testBucket, W } from "../support/RateLimitBucket.js"
import { decodeStoredLog } from "../../src/adapters/nats/rate-limit/StoredLog.js"
import { total } from "../../src/domain/rate-limit/CountedLog.js"

// The batcher on a real bucket, its writes' answers lost on purpose: what a server too slow for the
// client's timeout does, having taken the write.
const bucket = testBucket()
const nc = await connect({ servers })
afterAll(() => nc.close())
const js = jetstream(nc)
const kv = await new Kvm(js).create(bucket, { storage: StorageType.Memory, history: 1, ttl: W })
const T0 = 1_763_779_200_000
const Limit = 10

interface Faults {
  /** The compare-and-sets, numbered from 1, whose answers are lost. */
  readonly lostWrites: ReadonlySet<number>
  /** Whether the bucket takes those writes all the same. */
  readonly taken: boolean
  /** The reads, numbered from 1, that fail as a timeout would. */
  readonly failedReads?: ReadonlySet<number>
  readonly lifetimeMs?: number
  /** Where the writes lost and not taken are kept, to be sent late. */
  readonly late?: Array<() => Promise<number>>
}

/** A batcher on the bucket whose chosen reads and writes fail, as a server too slow for the client's timeout makes them. */
const batcherWith = (faults: Faults) => {
  const compareAndSet = makeCompareAndSet(js, bucket, () => nc.info?.version)
  let reads = 0
  let writes = 0
  const failing = { get: (key: string) => faults.failedReads?.has(++reads) === true ? Promise.reject(new Error("TIMEOUT")) : kv.get(key) } as unknown as KV
  return makeHitBatcher(failing, {
    maxAttempts: 10,
    compareAndSet: async (kvKey, value, previousSeq) => {
      if (!faults.lostWrites.has(++writes)) return compareAndSet(kvKey, value, previousSeq)
      if (faults.taken) await compareAndSet(kvKey, value, previousSeq)
      else faults.late?.push(() => compareAndSet(kvKey, value, previousSeq))
      throw new Error("TIMEOUT")
    },
    replicas: 1,
    lifetimeMs: faults.lifetimeMs ?? 60_000,
    grouped: false,
    onSettleFailure: () => {}
  })
}

/**
 * Hits `key` at `timeOf(i)` until one is refused: how many were admitted, the failed ones apart.
 * Each hit lets the writes it started run first, as requests a moment apart would.
 */
const untilRefused = async (batcher: ReturnType<typeof batcherWith>, key: string, timeOf = (i: number) => T0 + i) => {
  let admitted = 0
  let failed = 0
  for (let i = 0; i < Limit * 2; i++) {
    const at = timeOf(i)
    const state = batcher.admitLocally(key, Limit, W, at) ?? await batcher.hit(key, Limit, W, at, new AbortController().signal).catch(() => undefined)
    await new Promise((resolve) => setImmediate(resolve))
    if (state === undefined) failed++
    else if (state.allowed) admitted++
    else return { admitted, failed }
  }
  throw new Error("never refused")
}

describe("the hit batcher, when a write's answer is lost", () => {
  it("finds the write in the bucket and keeps its count and its reservation: the key gets its whole limit", async () => {
    // The first write counts the first request and reserves floor((10 - 1) / 2) = 4 entries.
    expect(await untilRefused(batcherWith({ lostWrites: new Set([1]), taken: true }), "lost-answer")).toEqual({ admitted: Limit, failed: 0 })
  })

  it("fails the batch when the write was not taken, and counts nothing for it", async () => {
    expect(await untilRefused(batcherWith({ lostWrites: new Set([1]), taken: false }), "not-taken")).toEqual({ admitted: Limit, failed: 1 })
  })

  it("gives back the room a taken write reserved once the key's next read finds it, when the reads after the write failed too", async () => {
    // The third request starts a background write (half the share spent); it is taken, its answer
    // and the three reads after it lost, and its new reservation is given back by the next one.
    const faults = { lostWrites: new Set([2]), taken: true, failedReads: new Set([3, 4, 5]) }
    expect(await untilRefused(batcherWith(faults), "lost-reads-taken")).toEqual({ admitted: Limit, failed: 0 })
  })

  it("gives back the room a write that was not taken handed back, once the key's next read shows it unchanged", async () => {
    // Reservations last a second: the third request, two seconds on, waits for an exact answer and
    // its batch gives back the three entries left; that write is lost and so are the reads after it.
    const faults = { lostWrites: new Set([2]), taken: false, failedReads: new Set([3, 4, 5]), lifetimeMs: 1_000 }
    const timeOf = (i: number) => (i < 2 ? T0 + i : T0 + 2_000 + i)
    expect(await untilRefused(batcherWith(faults), "lost-reads-not-taken", timeOf)).toEqual({ admitted: Limit, failed: 1 })
  })
})

describe("the hit batcher, when an unsure write leaves room behind and the key is not asked for again", () => {
  it("writes the key by itself once a lifetime has passed, and gives that room back", async () => {
    // As the case above, without the requests after the lost write: reservations of 50 ms, and the
    // third request's batch gives back the three entries left of the first's, its write lost.
    const faults = { lostWrites: new Set([2]), taken: false, failedReads: new Set([3, 4, 5]), lifetimeMs: 50 }
    const batcher = batcherWith(faults)
    const key = "unsure-quiet"
    const signal = new AbortController().signal
    expect((await batcher.hit(key, Limit, W, T0, signal)).allowed).toBe(true)
    expect(batcher.admitLocally(key, Limit, W, T0 + 1)?.allowed).toBe(true)
    await expect(batcher.hit(key, Limit, W, T0 + 2_000, signal)).rejects.toThrow("TIMEOUT")
    const entries = async () => total(decodeStoredLog((await kv.get(key))!.value)!.log)
    // The first request, and the second's entry (the write that would have counted it at its own time was lost).
    expect(await entries()).toBe(2 + 3)
    await expect.poll(entries, { timeout: 5_000, interval: 20 }).toBe(2)
    batcher.close()
  })
})

describe("the hit batcher, when a lost write arrives late", () => {
  it("has written the key first, so that the late write fails its compare-and-set", async () => {
    // The first request's write is lost and not found (the reads after it fail): the key is still
    // absent when the batcher writes it by itself, and the write that would have reserved 4
    // entries, arriving then, finds the key taken.
    const late: Array<() => Promise<number>> = []
    const batcher = batcherWith({ lostWrites: new Set([1]), taken: false, failedReads: new Set([2, 3, 4]), lifetimeMs: 50, late })
    const key = "unsure-late"
    await expect(batcher.hit(key, Limit, W, T0, new AbortController().signal)).rejects.toThrow("TIMEOUT")
    await expect.poll(async () => (await kv.get(key)) !== null, { timeout: 5_000, interval: 20 }).toBe(true)
    await expect(late[0]!()).rejects.toSatisfy(isConflict)
    expect(total(decodeStoredLog((await kv.get(key))!.value)!.log)).toBe(0)
    batcher.close()
  })
})

describe("the hit batcher, when a read fails", () => {
  it("keeps the share in place when a background write cannot read the key: the key gets its whole limit", async () => {
    // The second read is the background write's, after the third request spent half the share of 4.
    expect(await untilRefused(batcherWith({ lostWrites: new Set(), taken: false, failedReads: new Set([2]) }), "read-failed")).toEqual({ admitted: Limit, failed: 0 })
  })

  it("keeps the share when a request's exact count cannot read the key, and counts the requests admitted meanwhile", async () => {
    // Reservations last a second: the third request, two seconds on, finds them lapsed and waits
    // for a count whose read fails; the fourth's count gives back what the first reserved.
    const faults = { lostWrites: new Set<number>(), taken: false, failedReads: new Set([2]), lifetimeMs: 1_000 }
    const timeOf = (i: number) => (i < 2 ? T0 + i : T0 + 2_000 + i)
    expect(await untilRefused(batcherWith(faults), "exact-read-failed", timeOf)).toEqual({ admitted: Limit, failed: 1 })
  })
})
