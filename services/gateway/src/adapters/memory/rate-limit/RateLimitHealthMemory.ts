import { Effect, Layer } from "effect"
import { RateLimitHealth } from "../../../ports/rate-limit/RateLimitHealth.js"

/**
 * Beside the in-process store (`RATE_LIMIT_STORE=memory`): one process counting alone is what
 * was configured, not a degradation.
 */
export const RateLimitHealthMemory = Layer.succeed(
  RateLimitHealth,
  RateLimitHealth.of({ condition: Effect.succeed({ degraded: false, store: "memory", replicas: 1 }) })
)
