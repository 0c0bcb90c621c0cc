import type { WindowState } from "../../src/ports/RateLimitStore.js"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import fc from "fast-check"
import { connect } from "nats"
import { randomUUID } from "node:crypto"
import net from "node:net"
import type { AddressInfo } from "node:net"
import { makeSlidingWindowLog } from "../../src/adapters/memory/SlidingWindowLog.js"
import { makeRateLimitStoreKv, type RateLimitStoreKvOptions, StoredLog } from "../../src/adapters/nats/RateLimitStoreKv.js"

const servers = "nats://127.0.0.1:4222"
const W = 60_000
/** One bucket for this run, removed afterwards; tests keep apart by key prefix. */
const bucket = `rl_test_${randomUUID().replaceAll("-", "")}`

afterAll(async () => {
  const nc = await connect({ servers })
  const jsm = await nc.jetstreamManager()
  await jsm.streams.delete(`KV_${bucket}`).catch(() => undefined)
  await nc.close()
})

const quiet = Logger.minimumLogLevel(LogLevel.None)

type Hit = (key: string, limit: number, windowMs: number, nowMs: number) => Effect.Effect<WindowState>

const kvOptions = (overrides: Partial<RateLimitStoreKvOptions> = {}): RateLimitStoreKvOptions => ({
  servers,
  bucket,
  keyPrefix: `t${randomUUID().slice(0, 8)}`,
  windowMs: W,
  timeout: "2 seconds",
  ...overrides
})

/** A KV store connected to the bucket (waits for it: these tests are about the shared counts). */
const kvStore = (options: RateLimitStoreKvOptions) =>
  Effect.tap(makeRateLimitStoreKv(options), (store) => store.connected).pipe(Effect.provide(quiet))

const adapters: ReadonlyArray<readonly [string, Effect.Effect<Hit, never, import("effect").Scope.Scope>]> = [
  ["memory", Effect.sync(() => {
    const log = makeSlidingWindowLog()
    return (key: string, limit: number, windowMs: number, nowMs: number) => Effect.sync(() => log.hit(key, limit, windowMs, nowMs))
  })],
  ["jetstream kv", Effect.map(kvStore(kvOptions()), (store) => store.hit)]
]

describe("RateLimitStore contract", () => {
  for (const [name, make] of adapters) {
    describe(name, () => {
      it.scopedLive("counts while now < t + window, frees a slot exactly at t + window, and does not count refusals", () =>
        Effect.gen(function*() {
          const hit = yield* make
          const states: Array<WindowState> = []
          for (const t of [1_000, 2_000, 3_000, 60_999, 61_000, 61_001]) states.push(yield* hit("k", 3, W, t))
          expect(states).toEqual([
            { allowed: true, limit: 3, remaining: 2, resetAtMs: 61_000 },
            { allowed: true, limit: 3, remaining: 1, resetAtMs: 61_000 },
            { allowed: true, limit: 3, remaining: 0, resetAtMs: 61_000 },
            { allowed: false, limit: 3, remaining: 0, resetAtMs: 61_000 },
            { allowed: true, limit: 3, remaining: 0, resetAtMs: 62_000 },
            { allowed: false, limit: 3, remaining: 0, resetAtMs: 62_000 }
          ])
          // Refusals between 0 and W left no trace: the one counted request frees its slot at W.
          yield* hit("r", 1, W, 0)
          for (let t = 1; t < 50; t++) expect((yield* hit("r", 1, W, t * 1_000)).allowed).toBe(false)
          expect(yield* hit("r", 1, W, W)).toEqual({ allowed: true, limit: 1, remaining: 0, resetAtMs: 2 * W })
          // Sliding, not fixed: a burst at the end of one minute still counts at the start of the next.
          for (let i = 0; i < 5; i++) expect((yield* hit("s", 5, W, 59_000 + i)).allowed).toBe(true)
          expect((yield* hit("s", 5, W, 60_000)).allowed).toBe(false)
          expect(yield* hit("s", 5, W, 119_000)).toEqual({ allowed: true, limit: 5, remaining: 0, resetAtMs: 119_001 })
          // Keys apart.
          expect((yield* hit("a", 1, W, 0)).allowed).toBe(true)
          expect((yield* hit("b", 1, W, 0)).allowed).toBe(true)
          expect((yield* hit("a", 1, W, 1)).allowed).toBe(false)
        }))

      it.scopedLive("answers as the in-process log on any sequence of hits", () =>
        Effect.gen(function*() {
          const hit = yield* make
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
  }
})

describe("RateLimitStoreKv", () => {
  it("stores a log compactly and reads it back, evicted, appended and out of order", () => {
    const times = Array.from({ length: 180 }, (_, i) => 1_763_779_200_000 + i * 333)
    const bytes = StoredLog.of(180, times).encode()
    expect(bytes.length).toBeLessThan(400)
    const log = StoredLog.decode(bytes)!
    expect([log.limit, log.size, log.oldest, log.times()]).toEqual([180, 180, times[0], times])
    log.evictThrough(times[2]!)
    log.push(times[179]! + 5)
    log.push(times[179]! + 1)
    const expected = [...times.slice(3), times[179]! + 1, times[179]! + 5]
    const again = StoredLog.decode(log.encode())!
    expect([again.size, again.oldest, again.times()]).toEqual([expected.length, expected[0], expected])
    again.evictThrough(Number.MAX_SAFE_INTEGER)
    expect(StoredLog.decode(again.encode())!.size).toBe(0)
    expect(StoredLog.decode(Uint8Array.from([0x80]))).toBeUndefined()
  })

  it("agrees with a plain sorted list on any evictions and pushes", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 5_000 })), { maxLength: 200 }), (steps) => {
        let log = new StoredLog(1_000)
        let reference: Array<number> = []
        let now = 1_700_000_000_000
        for (const [evict, delta] of steps) {
          if (evict) {
            log.evictThrough(now - delta)
            reference = reference.filter((t) => t > now - delta)
          } else {
            const time = now + delta - 2_500
            log.push(time)
            reference = [...reference, time].sort((x, y) => x - y)
            now += delta
          }
          log = StoredLog.decode(log.encode())!
          expect(log.times()).toEqual(reference)
          expect(log.size).toBe(reference.length)
          if (reference.length > 0) expect(log.oldest).toBe(reference[0])
        }
      })
    )
  })

  it.scopedLive("holds one limit across two replicas: 180 alternate hits pass, the 181st is refused on either", () =>
    Effect.gen(function*() {
      const options = kvOptions()
      const [a, b] = [yield* kvStore(options), yield* kvStore(options)]
      const first = 1_763_779_200_000
      for (let i = 0; i < 180; i++) {
        const state = yield* (i % 2 === 0 ? a : b).hit("pat:x", 180, W, first + i * 10)
        expect(state).toEqual({ allowed: true, limit: 180, remaining: 179 - i, resetAtMs: first + W })
      }
      expect(yield* a.hit("pat:x", 180, W, first + 2_000)).toEqual({ allowed: false, limit: 180, remaining: 0, resetAtMs: first + W })
      expect(yield* b.hit("pat:x", 180, W, first + 2_001)).toEqual({ allowed: false, limit: 180, remaining: 0, resetAtMs: first + W })
      // The first request leaves the window: one more, on either.
      expect((yield* b.hit("pat:x", 180, W, first + W)).allowed).toBe(true)
      expect((yield* a.hit("pat:x", 180, W, first + W)).allowed).toBe(false)
    }))

  it.scopedLive("neither loses nor double-counts under concurrent hits from two replicas: 2 x 150 against 180 allow exactly 180", () =>
    Effect.gen(function*() {
      const options = kvOptions()
      const [a, b] = [yield* kvStore(options), yield* kvStore(options)]
      const now = 1_763_779_200_000
      const hits = Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? a : b).hit("pat:y", 180, W, now + (i % 7)))
      const states = yield* Effect.all(hits, { concurrency: "unbounded" })
      expect(states.filter((s) => s.allowed)).toHaveLength(180)
      // The bucket holds exactly those 180: a third replica finds no room either.
      const c = yield* kvStore(options)
      expect(yield* c.hit("pat:y", 180, W, now + 10)).toEqual({ allowed: false, limit: 180, remaining: 0, resetAtMs: now + W })
    }))

  it.scopedLive("keeps deployments apart by key prefix", () =>
    Effect.gen(function*() {
      const a = yield* kvStore(kvOptions())
      const b = yield* kvStore(kvOptions())
      expect((yield* a.hit("ip:127.0.0.1", 1, W, 1_000)).allowed).toBe(true)
      expect((yield* b.hit("ip:127.0.0.1", 1, W, 1_000)).allowed).toBe(true)
    }))

  it.scopedLive("opens the bucket anew when it was deleted, after counting in process meanwhile", () =>
    Effect.gen(function*() {
      const own = `rl_test_${randomUUID().replaceAll("-", "")}`
      const nc = yield* Effect.acquireRelease(Effect.promise(() => connect({ servers })), (c) =>
        Effect.promise(async () => {
          await (await c.jetstreamManager()).streams.delete(`KV_${own}`).catch(() => undefined)
          await c.close()
        }))
      const options = kvOptions({ bucket: own, reconnectEvery: "50 millis" })
      const store = yield* kvStore(options)
      expect((yield* store.hit("pat:v", 5, W, 1_000)).allowed).toBe(true)
      yield* Effect.promise(async () => (await nc.jetstreamManager()).streams.delete(`KV_${own}`))
      expect((yield* store.hit("pat:v", 5, W, 2_000)).remaining).toBe(3)
      // Without anyone else recreating it: this store opens (creates) the bucket again and counts there.
      const jsm = yield* Effect.promise(() => nc.jetstreamManager())
      let back = false
      for (let i = 0; i < 40 && !back; i++) {
        yield* Effect.sleep("50 millis")
        back = yield* Effect.promise(() => jsm.streams.info(`KV_${own}`).then(() => true, () => false))
      }
      expect(back).toBe(true)
      expect((yield* store.hit("pat:u", 5, W, 3_000)).allowed).toBe(true)
      const other = yield* kvStore(options)
      expect((yield* other.hit("pat:u", 5, W, 3_001)).remaining).toBe(3)
    }).pipe(Effect.provide(quiet)), 10_000)

  it.scopedLive("answers in process when NATS is unreachable, at once, and still holds the limit in this replica", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.promise(freePort)
      const store = yield* makeRateLimitStoreKv(kvOptions({ servers: `nats://127.0.0.1:${closed}`, timeout: "300 millis" }))
      const started = Date.now()
      expect(yield* store.hit("pat:z", 2, W, 1_000)).toEqual({ allowed: true, limit: 2, remaining: 1, resetAtMs: 61_000 })
      expect(yield* store.hit("pat:z", 2, W, 2_000)).toEqual({ allowed: true, limit: 2, remaining: 0, resetAtMs: 61_000 })
      expect(yield* store.hit("pat:z", 2, W, 3_000)).toEqual({ allowed: false, limit: 2, remaining: 0, resetAtMs: 61_000 })
      expect(Date.now() - started).toBeLessThan(300)
    }).pipe(Effect.provide(quiet)))

  it.scopedLive("answers in process within the timeout when the bucket stops answering mid-connection", () =>
    Effect.gen(function*() {
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => blackholeProxy(4222)), (p) => Effect.promise(p.close))
      const store = yield* kvStore(kvOptions({ servers: `nats://127.0.0.1:${proxy.port}`, timeout: "300 millis" }))
      expect((yield* store.hit("pat:w", 3, W, 1_000)).allowed).toBe(true)
      proxy.freeze()
      const started = Date.now()
      expect(yield* store.hit("pat:w", 3, W, 2_000)).toEqual({ allowed: true, limit: 3, remaining: 1, resetAtMs: 61_000 })
      expect(Date.now() - started).toBeLessThan(700)
      // Both requests stay counted in this replica, the one the bucket took and the one it did not.
      expect((yield* store.hit("pat:w", 3, W, 3_000)).remaining).toBe(0)
      expect((yield* store.hit("pat:w", 3, W, 4_000)).allowed).toBe(false)
    }).pipe(Effect.provide(quiet)), 10_000)
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

/** A TCP relay to NATS that can start dropping everything, as a network partition would, without closing. */
const blackholeProxy = async (targetPort: number) => {
  let frozen = false
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1")
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("error", () => undefined)
    }
    client.on("data", (data) => void (frozen || upstream.write(data)))
    upstream.on("data", (data) => void (frozen || client.write(data)))
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => {
      frozen = true
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}
