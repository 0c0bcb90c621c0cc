import { afterAll } from "@effect/vitest"
import { plainNats } from "@portfolio/platform/nats"
import { Effect, Layer, References } from "effect"
import { connect } from "@nats-io/transport-node"
import { jetstreamManager } from "@nats-io/jetstream"
import { randomUUID } from "node:crypto"
import { makeRateLimitStoreKv, type RateLimitStoreKvOptions } from "../../src/adapters/nats/rate-limit/RateLimitStoreKv.js"
import { W } from "./Windows.js"

export { W }

export const servers = "nats://127.0.0.1:4222"

export const quiet = Layer.succeed(References.MinimumLogLevel, "None")

/** A bucket name of the calling test file's own, whose stream is deleted after the file's tests. */
export const testBucket = (): string => {
  const bucket = `rl_test_${randomUUID().replaceAll("-", "")}`
  afterAll(async () => {
    const nc = await connect({ servers })
    await (await jetstreamManager(nc)).streams.delete(`KV_${bucket}`).catch(() => undefined)
    await nc.close()
  })
  return bucket
}

/** Options of a store in `bucket`; each call has a key prefix of its own, so that stores keep apart unless they share options. */
export const kvOptions = (bucket: string, overrides: Partial<RateLimitStoreKvOptions> = {}): RateLimitStoreKvOptions => ({
  nats: plainNats(servers),
  bucket,
  keyPrefix: `t${randomUUID().slice(0, 8)}`,
  windowMs: W,
  timeout: "2 seconds",
  ...overrides
})

/** A KV store once connected to its bucket: the cases that use it are about the shared counts, not the fallback. */
export const kvStore = (options: RateLimitStoreKvOptions) =>
  Effect.tap(makeRateLimitStoreKv(options), (store) => store.connected).pipe(Effect.provide(quiet))
