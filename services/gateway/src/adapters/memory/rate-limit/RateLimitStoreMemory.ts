import { Effect, Layer } from "effect"
import { makeSlidingWindowLog } from "../../../domain/rate-limit/SlidingWindowLog.js"
import { RateLimitStore } from "../../../ports/rate-limit/RateLimitStore.js"

/** `RATE_LIMIT_STORE=memory`: one process counting alone, each request answered from its own log. */
export const RateLimitStoreMemory = Layer.sync(RateLimitStore, () => {
  const log = makeSlidingWindowLog()
  return RateLimitStore.of({ hit: (key, limit, windowMs, nowMs) => Effect.sync(() => log.hit(key, limit, windowMs, nowMs)) })
})
