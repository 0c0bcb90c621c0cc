import { describe, expect, it } from "@effect/vitest"
import { plainNats } from "@portfolio/platform/nats"
import { Effect } from "effect"
import { localShare } from "../../src/domain/rate-limit/LocalShare.js"
import { blackholeProxy } from "../support/NatsFaults.js"
import { kvOptions, kvStore, quiet, testBucket } from "../support/RateLimitBucket.js"
import { mostInAnyWindow, W } from "../support/Windows.js"

// Far from its limit, a key's requests are admitted against room its replica reserved in the bucket,
// with no round trip before the answer (domain/LocalShare.ts); the limit stays exact across replicas.
const bucket = testBucket()
const T0 = 1_763_779_200_000

describe.each([2, 3])("%i replicas sharing the bucket", (replicas) => {
  it.live("receiving together twice the limit, in concurrent bursts spread over them, admit about the limit and never more in any 60 s", () =>
    Effect.gen(function*() {
      const options = kvOptions(bucket, { replicas })
      const stores: Array<Effect.Success<ReturnType<typeof kvStore>>> = []
      for (let i = 0; i < replicas; i++) stores.push(yield* kvStore(options))
      const admitted: Array<number> = []
      let next = 0
      // 6 requests a second (twice 180 a minute) for a minute and a half of the stores' clock: three
      // at once every 500 ms, each to the next replica in turn.
      for (let t = T0; t < T0 + 90_000; t += 500) {
        const burst = [0, 1, 2].map((i) => {
          const store = stores[next++ % replicas]!
          return Effect.map(store.hit("pat:busy", 180, W, t + i), (state) => (state.allowed ? t + i : undefined))
        })
        for (const at of yield* Effect.all(burst, { concurrency: "unbounded" })) if (at !== undefined) admitted.push(at)
      }
      admitted.sort((x, y) => x - y)
      expect(mostInAnyWindow(admitted)).toBeLessThanOrEqual(Math.floor(180 * 1.01))
      // The first minute, and the one half a minute later, when the first requests leave the window.
      expect(admitted.filter((at) => at < T0 + W).length).toBeGreaterThanOrEqual(180 * 0.95)
      expect(admitted.filter((at) => at >= T0 + 30_000 && at < T0 + 30_000 + W).length).toBeGreaterThanOrEqual(180 * 0.95)
    }), 20_000)
})

describe("RateLimitStoreKv admitting against its share", () => {
  it.live("holds the limit when a replica's counts reach the bucket late: its share was taken in the bucket before it was used", () =>
    Effect.gen(function*() {
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => blackholeProxy(4222)), (p) => Effect.promise(p.close))
      const options = kvOptions(bucket, { replicas: 2 })
      const fast = yield* kvStore(options)
      const slow = yield* kvStore({ ...options, nats: plainNats(`nats://127.0.0.1:${proxy.port}`) })
      proxy.delay(150)
      let admitted = 0
      const count = (allowed: boolean) => void (allowed && admitted++)
      // The slow replica learns the key, then admits its share at once; its counts are on their way.
      count((yield* slow.hit("pat:late", 180, W, T0)).allowed)
      for (let i = 1; i <= localShare(180, 1, 2); i++) count((yield* slow.hit("pat:late", 180, W, T0 + i)).allowed)
      // Meanwhile the other replica goes to the limit as it sees it.
      for (let i = 0; i < 200; i++) count((yield* fast.hit("pat:late", 180, W, T0 + 100 + i)).allowed)
      // Had the share been counted only afterwards, the slow replica's 44 would land on top of 179.
      expect(admitted).toBe(180)
      yield* Effect.sleep("1 second")
      expect(yield* fast.hit("pat:late", 180, W, T0 + 1_000)).toMatchObject({ allowed: false, remaining: 0 })
    }).pipe(Effect.provide(quiet)), 10_000)

  it.live("answers the first requests of a fresh key with room without the bucket: while it is stalled, at once and against the full limit", () =>
    Effect.gen(function*() {
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => blackholeProxy(4222)), (p) => Effect.promise(p.close))
      const store = yield* kvStore(kvOptions(bucket, { nats: plainNats(`nats://127.0.0.1:${proxy.port}`), timeout: "1 second", replicas: 3 }))
      // A key this replica does not know takes the exact path: read and compare-and-set.
      expect(yield* store.hit("pat:fresh", 180, W, T0)).toEqual({ allowed: true, limit: 180, remaining: 179, resetAtMs: T0 + W })
      expect(yield* store.hit("pat:near", 3, W, T0)).toMatchObject({ allowed: true, limit: 3, remaining: 2 })
      proxy.freeze()
      const share = localShare(180, 1, 3)
      expect(share).toBe(29)
      const started = Date.now()
      for (let i = 1; i <= share; i++) {
        expect(yield* store.hit("pat:fresh", 180, W, T0 + i)).toEqual({ allowed: true, limit: 180, remaining: 179 - i, resetAtMs: T0 + W })
      }
      expect(Date.now() - started).toBeLessThan(200)
      // Its share spent, the key's next request needs the bucket: it waits for it, then is counted alone.
      let waited = Date.now()
      expect(yield* store.hit("pat:fresh", 180, W, T0 + 100)).toMatchObject({ allowed: true, limit: 60 })
      expect(Date.now() - waited).toBeGreaterThanOrEqual(900)
      // A key too near its limit for any share (floor((3 - 1) / 6) = 0) never goes without the bucket.
      waited = Date.now()
      expect(yield* store.hit("pat:near", 3, W, T0 + 100)).toMatchObject({ allowed: false, limit: 1 })
      expect(Date.now() - waited).toBeGreaterThanOrEqual(900)
    }).pipe(Effect.provide(quiet)), 10_000)

  it.live("takes no bucket round trip before answering a busy key's requests, where the exact path takes two each", () =>
    Effect.gen(function*() {
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => blackholeProxy(4222)), (p) => Effect.promise(p.close))
      const nats = plainNats(`nats://127.0.0.1:${proxy.port}`)
      /** Key-value requests sent between each call and its answer, for 100 requests one at a time, a millisecond apart. */
      const roundTrips = (replicas: number) =>
        Effect.gen(function*() {
          const store = yield* kvStore(kvOptions(bucket, { nats, replicas }))
          const before: Array<number> = []
          const sent = proxy.kvRequests()
          for (let i = 0; i < 100; i++) {
            const atCall = proxy.kvRequests()
            expect((yield* store.hit(`pat:r${replicas}`, 180, W, T0 + i * 10)).allowed).toBe(true)
            before.push(proxy.kvRequests() - atCall)
            yield* Effect.sleep("1 millis")
          }
          yield* Effect.sleep("50 millis")
          return { before, all: proxy.kvRequests() - sent }
        })
      // So many replicas that no share is ever more than 0: every request counted as before local shares.
      const exact = yield* roundTrips(1_000)
      expect(exact.before.every((n) => n >= 2)).toBe(true)
      const shared = yield* roundTrips(3)
      expect(shared.before[0]).toBeGreaterThanOrEqual(2)
      expect(shared.before.filter((n) => n === 0).length).toBeGreaterThanOrEqual(90)
      // The bucket still counts every request, after the answer: about as many reads and writes as before.
      expect(shared.all).toBeLessThanOrEqual(exact.all + 10)
    }))
})
