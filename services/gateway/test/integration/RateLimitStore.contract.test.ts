import { describe, expect, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import fc from "fast-check"
import { makeSlidingWindowLog } from "../../src/domain/rate-limit/SlidingWindowLog.js"
import { RateLimitStoreMemory } from "../../src/adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { RateLimitStore, type RateLimitStoreShape } from "../../src/ports/rate-limit/RateLimitStore.js"
import { type WindowState } from "../../src/domain/rate-limit/RateLimitWindow.js"
import { kvOptions, kvStore, testBucket, W } from "../support/RateLimitBucket.js"
import { blackholeProxy } from "../support/NatsFaults.js"
import { plainNats } from "@portfolio/platform/nats"
import { useNatsCluster } from "@portfolio/platform/testing"
import { randomUUID } from "node:crypto"

const bucket = testBucket()
const cluster = useNatsCluster()
const clusterBucket = `rl_cluster_${randomUUID().replaceAll("-", "")}`

/** Each case gets a store of its own: a fresh in-process log, or a fresh key prefix in the bucket. */
const adapters: ReadonlyArray<{ readonly name: string; readonly store: Effect.Effect<RateLimitStoreShape, never, Scope.Scope> }> = [
  { name: "RateLimitStoreMemory (in process)", store: Effect.provide(RateLimitStore, RateLimitStoreMemory, { local: true }) },
  { name: "RateLimitStoreKv (JetStream key-value)", store: Effect.suspend(() => Effect.map(kvStore(kvOptions(bucket)), (kv) => RateLimitStore.of({ hit: kv.hit }))) },
  {
    name: "RateLimitStoreKv (a three-server JetStream cluster, the bucket at three replicas)",
    store: Effect.suspend(() =>
      Effect.map(kvStore(kvOptions(clusterBucket, { nats: plainNats(cluster.urls(), 3), timeout: "5 seconds" })), (kv) => RateLimitStore.of({ hit: kv.hit })))
  }
]

describe.each(adapters)("RateLimitStore contract: $name", ({ store }) => {
  it.live("counts a request while now < t + window and frees its slot exactly at t + window", () =>
    Effect.gen(function*() {
      const { hit } = yield* store
      const states: Array<WindowState> = []
      for (const t of [1_000, 2_000, 3_000, 60_999, 61_000, 61_001]) states.push(yield* hit("k", 3, W, t))
      expect(states).toEqual([
        { allowed: true, limit: 3, remaining: 2, resetAtMs: 61_000 },
        { allowed: true, limit: 3, remaining: 1, resetAtMs: 61_000 },
        { allowed: true, limit: 3, remaining: 0, resetAtMs: 61_000 },
        { allowed: false, limit: 3, remaining: 0, resetAtMs: 61_000 },
        // The request of t=1000 leaves the window at 61000 sharp: one slot, and the reset moves to the next oldest.
        { allowed: true, limit: 3, remaining: 0, resetAtMs: 62_000 },
        { allowed: false, limit: 3, remaining: 0, resetAtMs: 62_000 }
      ])
    }))

  it.live("does not count refused requests", () =>
    Effect.gen(function*() {
      const { hit } = yield* store
      // Refusals between 0 and W leave no trace: the one counted request frees its slot at W.
      yield* hit("k", 1, W, 0)
      for (let t = 1; t < 100; t++) expect((yield* hit("k", 1, W, t * 100)).allowed).toBe(false)
      expect(yield* hit("k", 1, W, W)).toEqual({ allowed: true, limit: 1, remaining: 0, resetAtMs: 2 * W })
      yield* hit("r", 1, W, 0)
      for (let t = 1; t < 50; t++) expect((yield* hit("r", 1, W, t * 1_000)).allowed).toBe(false)
      expect(yield* hit("r", 1, W, W)).toEqual({ allowed: true, limit: 1, remaining: 0, resetAtMs: 2 * W })
    }))

  it.live("keeps keys apart", () =>
    Effect.gen(function*() {
      const { hit } = yield* store
      expect((yield* hit("a", 1, W, 0)).allowed).toBe(true)
      expect((yield* hit("a", 1, W, 1)).allowed).toBe(false)
      expect((yield* hit("b", 1, W, 1)).allowed).toBe(true)
      expect((yield* hit("c", 1, W, 0)).allowed).toBe(true)
      expect((yield* hit("d", 1, W, 0)).allowed).toBe(true)
      expect((yield* hit("c", 1, W, 1)).allowed).toBe(false)
    }))

  it.live("slides: a burst at the end of one minute still counts at the start of the next", () =>
    Effect.gen(function*() {
      const { hit } = yield* store
      for (let i = 0; i < 5; i++) expect((yield* hit("k", 5, W, 59_000 + i)).allowed).toBe(true)
      // A fixed window would reset at 60000; the sliding one refuses until 119000.
      expect((yield* hit("k", 5, W, 60_000)).allowed).toBe(false)
      expect((yield* hit("k", 5, W, 118_999)).allowed).toBe(false)
      expect(yield* hit("k", 5, W, 119_000)).toEqual({ allowed: true, limit: 5, remaining: 0, resetAtMs: 119_001 })
    }))

  it.live("answers as the in-process log on any sequence of hits", () =>
    Effect.gen(function*() {
      const { hit } = yield* store
      const samples = fc.sample(
        fc.tuple(fc.integer({ min: 1, max: 12 }), fc.array(fc.integer({ min: 0, max: 15_000 }), { minLength: 1, maxLength: 60 })),
        { numRuns: 8, seed: 20261122 }
      )
      for (const [run, [limit, gaps]] of samples.entries()) {
        const reference = makeSlidingWindowLog()
        let now = 1_700_000_000_000
        for (const gap of gaps) {
          now += gap
          expect(yield* hit(`p${run}`, limit, W, now)).toEqual(reference.hit(`p${run}`, limit, W, now))
        }
      }
    }))
})

describe("RateLimitStoreKv without a round trip", () => {
  it.live("answers a busy key from its own room as the bucket would, counting nothing when it cannot", () =>
    Effect.gen(function*() {
      // Through a relay that counts the key-value requests each answer waited for.
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => blackholeProxy(4222)), (p) => Effect.promise(p.close))
      const { hit } = yield* kvStore(kvOptions(bucket, { nats: plainNats(`nats://127.0.0.1:${proxy.port}`) }))
      const reference = makeSlidingWindowLog()
      let now = 1_700_000_000_000
      let immediate = 0
      // 40 requests a few ms apart under a limit of 30: the store's own room while there is some, then refusals.
      for (let i = 0; i < 40; i++) {
        now += 7
        const atCall = proxy.kvRequests()
        expect(yield* hit("n", 30, W, now)).toEqual(reference.hit("n", 30, W, now))
        if (proxy.kvRequests() === atCall) immediate++
      }
      // The first request of a key may need the store; most of a busy key's may not.
      expect(immediate).toBeGreaterThan(20)
    }))
})
