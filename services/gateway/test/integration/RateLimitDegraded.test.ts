import { describe, expect, it } from "@effect/vitest"
import { NatsSettings, plainNats } from "@portfolio/platform/nats"
import { Metrics, MetricsLive } from "@portfolio/platform/telemetry"
import { freePort, parsePrometheusText } from "@portfolio/platform/testing"
import { ConfigProvider, Effect, Layer, Logger } from "effect"
import { connect } from "@nats-io/transport-node"
import { jetstreamManager } from "@nats-io/jetstream"
import { randomUUID } from "node:crypto"
import { makeRateLimitStoreKv, RateLimitStoreKv } from "../../src/adapters/nats/rate-limit/RateLimitStoreKv.js"
import { RateLimitHealth } from "../../src/ports/rate-limit/RateLimitHealth.js"
import { RateLimitStore } from "../../src/ports/rate-limit/RateLimitStore.js"
import { blackholeProxy } from "../support/NatsFaults.js"
import { kvOptions, kvStore, quiet, servers, testBucket, W } from "../support/RateLimitBucket.js"
import { testConfigLayer, testSettings } from "../support/testConfig.js"

// While the bucket does not answer, each of GATEWAY_REPLICAS replicas admits ceil(limit / replicas)
// per key and window, so that together they stay near the limit; with the bucket, the limit is exact.
const bucket = testBucket()

/** The warnings a store logs, by their message, in a logger the test reads: a layer, like any double. */
const capturedWarnings = () => {
  const warnings: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    const first = Array.isArray(message) ? message[0] : message
    if (logLevel === "Warn") warnings.push(String(first))
  })
  return { warnings, layer: Logger.layer([logger]) }
}

const unreachable = Effect.map(Effect.promise(freePort), (port) => plainNats(`nats://127.0.0.1:${port}`))

/** The metrics of a gateway process, as `runService` provides them, with no OTLP export. */
const recorded = MetricsLive("gateway").pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: {} }))))

/** The degraded gauge in a scrape of those metrics: its type and its samples' values, nothing when it is not exported. */
const degradedGauge = Effect.map(Effect.flatMap(Metrics, (metrics) => metrics.exposition), (text) => {
  const family = parsePrometheusText(text).get("portfolio_gateway_rate_limit_degraded")
  return family && { type: family.type, values: family.samples.map((sample) => sample.value) }
})

describe("RateLimitStoreKv degraded mode", () => {
  it.live("with 3 replicas and a limit of 9, a replica cut off from NATS admits 3 per window, not 9, and says so", () =>
    Effect.gen(function*() {
      const store = yield* makeRateLimitStoreKv(kvOptions(bucket, { nats: yield* unreachable, timeout: "300 millis", replicas: 3 }))
      expect(yield* store.hit("pat:a", 9, W, 1_000)).toEqual({ allowed: true, limit: 3, remaining: 2, resetAtMs: 61_000 })
      expect(yield* store.hit("pat:a", 9, W, 2_000)).toEqual({ allowed: true, limit: 3, remaining: 1, resetAtMs: 61_000 })
      expect(yield* store.hit("pat:a", 9, W, 3_000)).toEqual({ allowed: true, limit: 3, remaining: 0, resetAtMs: 61_000 })
      for (let t = 4_000; t < 61_000; t += 5_000) {
        expect(yield* store.hit("pat:a", 9, W, t)).toEqual({ allowed: false, limit: 3, remaining: 0, resetAtMs: 61_000 })
      }
      // The window slides as usual: the first request leaves it, one slot frees.
      expect(yield* store.hit("pat:a", 9, W, 61_000)).toEqual({ allowed: true, limit: 3, remaining: 0, resetAtMs: 62_000 })
      // Each key has its share; a limit below the replica count still lets one request through.
      expect((yield* store.hit("ip:10.0.0.1", 2, W, 1_000)).limit).toBe(1)
      expect((yield* store.hit("ip:10.0.0.1", 2, W, 1_001)).allowed).toBe(false)
    }).pipe(Effect.provide(quiet)))

  it.live("three replicas cut off together admit the limit between them, not three times it", () =>
    Effect.gen(function*() {
      const nats = yield* unreachable
      const replicas = [0, 1, 2].map(() => makeRateLimitStoreKv(kvOptions(bucket, { nats, timeout: "300 millis", replicas: 3 })))
      let admitted = 0
      for (const replica of replicas) {
        const store = yield* replica
        for (let i = 0; i < 9; i++) if ((yield* store.hit("pat:b", 9, W, 1_000 + i)).allowed) admitted++
      }
      expect(admitted).toBe(9)
    }).pipe(Effect.provide(quiet)))

  it.live("holds the exact limit, not the share, while the bucket answers", () =>
    Effect.gen(function*() {
      const store = yield* kvStore(kvOptions(bucket, { replicas: 3 }))
      for (let i = 0; i < 9; i++) expect(yield* store.hit("pat:c", 9, W, 1_000 + i)).toMatchObject({ allowed: true, limit: 9, remaining: 8 - i })
      expect(yield* store.hit("pat:c", 9, W, 2_000)).toEqual({ allowed: false, limit: 9, remaining: 0, resetAtMs: 61_000 })
      expect(yield* store.condition).toEqual({ degraded: false, store: "jetstream", replicas: 3 })
    }))

  it.live("counts what the bucket admitted here against the share once it stops answering", () =>
    Effect.gen(function*() {
      const proxy = yield* Effect.acquireRelease(Effect.promise(() => blackholeProxy(4222)), (p) => Effect.promise(p.close))
      const store = yield* kvStore(kvOptions(bucket, { nats: plainNats(`nats://127.0.0.1:${proxy.port}`), timeout: "300 millis", replicas: 3 }))
      for (let i = 0; i < 5; i++) expect((yield* store.hit("pat:d", 9, W, 1_000 + i)).limit).toBe(9)
      proxy.freeze()
      // 5 counted here already, past the share of 3: refused, and free for sure only a window from now.
      expect(yield* store.hit("pat:d", 9, W, 2_000)).toEqual({ allowed: false, limit: 3, remaining: 0, resetAtMs: 2_000 + W })
    }).pipe(Effect.provide(quiet)), 10_000)

  it.live("enters degraded mode once, with one warning and a readiness detail, and leaves it once the bucket answers again", () =>
    Effect.gen(function*() {
      const { warnings, layer } = capturedWarnings()
      yield* Effect.gen(function*() {
        const own = `rl_test_${randomUUID().replaceAll("-", "")}`
        const nc = yield* Effect.acquireRelease(Effect.promise(() => connect({ servers })), (c) =>
          Effect.promise(async () => {
            await (await jetstreamManager(c)).streams.delete(`KV_${own}`).catch(() => undefined)
            await c.close()
          }))
        const options = kvOptions(bucket, { bucket: own, timeout: "300 millis", replicas: 3, reconnectEvery: "50 millis", exactAfter: "50 millis" })
        const store = yield* Effect.tap(makeRateLimitStoreKv(options), (s) => s.connected)
        expect((yield* store.hit("pat:e", 9, W, 1_000)).limit).toBe(9)
        expect((yield* store.condition).degraded).toBe(false)

        yield* Effect.promise(async () => (await jetstreamManager(nc)).streams.delete(`KV_${own}`))
        // The one request of room reserved at the first (floor((9 - 1) / (2 x 3))) needs no round trip;
        // the next ones find no bucket and are counted alone.
        expect((yield* store.hit("pat:e", 9, W, 2_000)).limit).toBe(9)
        for (let t = 3_000; t < 6_000; t += 1_000) expect((yield* store.hit("pat:e", 9, W, t)).limit).toBe(3)
        const degraded = yield* store.condition
        expect(degraded).toMatchObject({ degraded: true, store: "jetstream", replicas: 3 })
        expect(degraded.reason).toBeTruthy()
        expect(new Date(degraded.since!).toISOString()).toBe(degraded.since)
        expect(warnings.filter((w) => w.startsWith("rate limit degraded"))).toHaveLength(1)

        // The store opens the bucket anew; a request answered by it comes at the full limit again.
        let limit = 3
        for (let i = 0; i < 60 && limit !== 9; i++) {
          yield* Effect.sleep("50 millis")
          limit = (yield* store.hit(`pat:f${i}`, 9, W, 10_000)).limit
        }
        expect(limit).toBe(9)
        // Exact again after the bucket has answered without a miss for `exactAfter`.
        yield* Effect.sleep("100 millis")
        yield* store.hit("pat:g", 9, W, 11_000)
        expect(yield* store.condition).toEqual({ degraded: false, store: "jetstream", replicas: 3 })
        expect(warnings.filter((w) => w.startsWith("rate limit degraded"))).toHaveLength(1)
        expect(warnings.filter((w) => w.startsWith("rate limit exact again"))).toHaveLength(1)
      }).pipe(Effect.provide(layer))
    }), 15_000)

  it.live("exports the gauge portfolio_gateway_rate_limit_degraded: 0 from the start, 1 while NATS is away, 0 once it is back", () =>
    Effect.gen(function*() {
      // NATS behind a relay on a port of the test's own: closing the relay takes NATS away from the
      // store's connection, which keeps reconnecting to that port; a new relay there brings it back.
      const port = yield* Effect.promise(freePort)
      let relay = yield* Effect.promise(() => blackholeProxy(4222, port))
      yield* Effect.addFinalizer(() => Effect.promise(() => relay.close()))
      const options = kvOptions(bucket, { nats: plainNats(`nats://127.0.0.1:${port}`), timeout: "300 millis", replicas: 3, reconnectEvery: "50 millis", exactAfter: "50 millis" })
      const store = yield* Effect.tap(makeRateLimitStoreKv(options), (s) => s.connected)
      // Before any request and any degradation: an alert reads 0, not the absence of a series.
      expect(yield* degradedGauge).toEqual({ type: "gauge", values: [0] })
      expect((yield* store.hit("pat:m", 9, W, 1_000)).limit).toBe(9)
      expect(yield* degradedGauge).toEqual({ type: "gauge", values: [0] })

      yield* Effect.promise(() => relay.close())
      expect((yield* store.hit("pat:n", 9, W, 2_000)).limit).toBe(3)
      expect((yield* store.condition).degraded).toBe(true)
      expect(yield* degradedGauge).toEqual({ type: "gauge", values: [1] })

      relay = yield* Effect.promise(() => blackholeProxy(4222, port))
      let limit = 3
      for (let i = 0; i < 100 && limit !== 9; i++) {
        yield* Effect.sleep("100 millis")
        limit = (yield* store.hit(`pat:o${i}`, 9, W, 3_000)).limit
      }
      expect(limit).toBe(9)
      // Exact again once the bucket has answered for `exactAfter` without a miss: polled, since on a
      // loaded machine an answer may still come later than the 300 ms `timeout` and count as a miss.
      let degraded = true
      for (let i = 0; i < 100 && degraded; i++) {
        yield* Effect.sleep("100 millis")
        yield* store.hit(`pat:p${i}`, 9, W, 4_000)
        degraded = (yield* store.condition).degraded
      }
      expect(degraded).toBe(false)
      expect(yield* degradedGauge).toEqual({ type: "gauge", values: [0] })
    }).pipe(Effect.provide(Layer.merge(recorded, quiet))), 60_000)

  it.live("reports degraded while there is no session, without any request", () =>
    Effect.gen(function*() {
      const store = yield* makeRateLimitStoreKv(kvOptions(bucket, { nats: yield* unreachable, replicas: 2 }))
      const condition = yield* store.condition
      expect(condition).toMatchObject({ degraded: true, store: "jetstream", replicas: 2 })
      expect(condition.reason).toBeTruthy()
    }).pipe(Effect.provide(quiet)))

  it.live("is wired by RateLimitStoreKv from GATEWAY_REPLICAS, with its health beside it", () =>
    Effect.gen(function*() {
      const env = { GATEWAY_REPLICAS: "3", DATABASE_URL: `postgres://test@127.0.0.1:5432/${randomUUID()}` }
      const settings = testConfigLayer({ rateLimitBucket: { ...testSettings().rateLimitBucket, name: bucket } })
      const live = RateLimitStoreKv.pipe(Layer.provide(Layer.mergeAll(NatsSettings.layer, settings, quiet)))
      yield* Effect.gen(function*() {
        expect(yield* (yield* RateLimitHealth).condition).toEqual({ degraded: false, store: "jetstream", replicas: 3 })
        expect((yield* (yield* RateLimitStore).hit("pat:h", 9, W, 1_000)).limit).toBe(9)
      }).pipe(Effect.provide(live), Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
    }))
})
