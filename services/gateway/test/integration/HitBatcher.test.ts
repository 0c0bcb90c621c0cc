import { afterAll, describe, expect, it } from "vitest"
import { connect } from "@nats-io/transport-node"
import { jetstream } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { StorageType } from "@nats-io/jetstream"
import { makeCompareAndSet } from "../../src/adapters/nats/rate-limit/CompareAndSet.js"
import { makeHitBatcher } from "../../src/adapters/nats/rate-limit/HitBatcher.js"
import { servers, testBucket, W } from "../support/RateLimitBucket.js"

// The batcher on a real bucket, its writes' answers lost on purpose: what a server too slow for the
// client's timeout does, having taken the write.
const bucket = testBucket()
const nc = await connect({ servers })
afterAll(() => nc.close())
const js = jetstream(nc)
const kv = await new Kvm(js).create(bucket, { storage: StorageType.Memory, history: 1, ttl: W })
const T0 = 1_763_779_200_000
const Limit = 10

/** A batcher whose next `lose` writes are taken by the bucket and their answers lost, and whether each is. */
const batcherLosing = (lose: { count: number; taken: boolean }) => {
  const compareAndSet = makeCompareAndSet(js, bucket, () => nc.info?.version)
  return makeHitBatcher(kv, {
    maxAttempts: 10,
    compareAndSet: async (kvKey, value, previousSeq) => {
      if (lose.count === 0) return compareAndSet(kvKey, value, previousSeq)
      lose.count--
      if (lose.taken) await compareAndSet(kvKey, value, previousSeq)
      throw new Error("TIMEOUT")
    },
    replicas: 1,
    lifetimeMs: 60_000,
    grouped: false,
    onSettleFailure: () => {}
  })
}

/** Hits `key` once a millisecond until one is refused: how many were admitted, the failed ones apart. */
const untilRefused = async (batcher: ReturnType<typeof batcherLosing>, key: string) => {
  let admitted = 0
  let failed = 0
  for (let i = 0; i < Limit * 2; i++) {
    const at = T0 + i
    const state = batcher.admitLocally(key, Limit, W, at) ?? await batcher.hit(key, Limit, W, at, new AbortController().signal).catch(() => undefined)
    if (state === undefined) failed++
    else if (state.allowed) admitted++
    else return { admitted, failed }
  }
  throw new Error("never refused")
}

describe("the hit batcher, when a write's answer is lost", () => {
  it("finds the write in the bucket and keeps its count and its reservation: the key gets its whole limit", async () => {
    // The first write counts the first request and reserves floor((10 - 1) / 2) = 4 entries.
    expect(await untilRefused(batcherLosing({ count: 1, taken: true }), "lost-answer")).toEqual({ admitted: Limit, failed: 0 })
  })

  it("fails the batch when the write was not taken, and counts nothing for it", async () => {
    expect(await untilRefused(batcherLosing({ count: 1, taken: false }), "not-taken")).toEqual({ admitted: Limit, failed: 1 })
  })
})
