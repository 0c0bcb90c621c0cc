import { Context, type Effect } from "effect"

/** The state of one key's sliding window right after a request was (or was not) counted. */
export interface WindowState {
  /** Whether the request fit in the window and was counted. */
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Epoch milliseconds at which the oldest counted request leaves the window; `now` when empty. */
  readonly resetAtMs: number
}

/**
 * The request counters of the rate limiter: a sliding window of `windowMs` holding at most `limit`
 * requests per key. A request that does not fit is refused and not counted. The in-process adapter
 * serves one replica; a cluster-wide store implements the same port.
 */
export interface RateLimitStoreShape {
  readonly hit: (key: string, limit: number, windowMs: number, nowMs: number) => Effect.Effect<WindowState>
}

export class RateLimitStore extends Context.Tag("@portfolio/gateway/RateLimitStore")<RateLimitStore, RateLimitStoreShape>() {}
