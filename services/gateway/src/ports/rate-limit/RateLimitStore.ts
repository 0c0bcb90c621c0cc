import { Context, type Effect } from "effect"
import type { WindowState } from "../../domain/rate-limit/RateLimitWindow.js"

/**
 * The request counters of the rate limiter: a sliding window of `windowMs` holding at most `limit`
 * requests per key. A request that does not fit is refused and not counted. The in-process adapter
 * serves one replica; a cluster-wide store implements the same port.
 */
export interface RateLimitStoreShape {
  readonly hit: (key: string, limit: number, windowMs: number, nowMs: number) => Effect.Effect<WindowState>
  /**
   * `hit` as a plain call when this process can answer it with nothing to wait for (the in-process
   * log always can; a cluster-wide store while this replica holds room in the key's window, or knows
   * the key is over its limit), counting exactly as `hit` would. `undefined` counts nothing: the
   * caller then asks `hit`.
   */
  readonly admitNow: (key: string, limit: number, windowMs: number, nowMs: number) => WindowState | undefined
}

export class RateLimitStore extends Context.Service<RateLimitStore, RateLimitStoreShape>()("@portfolio/gateway/RateLimitStore") {}
