import { Context, type Effect } from "effect"
import type { WindowState } from "../../domain/rate-limit/RateLimitWindow.js"

/**
 * The request counters of the rate limiter: a sliding window of `windowMs` holding at most `limit`
 * requests per key. A request that does not fit is refused and not counted. The in-process adapter
 * serves one replica; a cluster-wide store implements the same port.
 */
export interface RateLimitStoreShape {
  readonly hit: (key: string, limit: number, windowMs: number, nowMs: number) => Effect.Effect<WindowState>
}

export class RateLimitStore extends Context.Service<RateLimitStore, RateLimitStoreShape>()("@portfolio/gateway/RateLimitStore") {}
