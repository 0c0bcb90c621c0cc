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
 * A key's window once a request was (or was not) counted in it: `size` requests counted, the oldest
 * at `oldestMs`. Every log of the limiter, in process or in the bucket, reports through this.
 */
export const windowStateOf = (allowed: boolean, limit: number, size: number, oldestMs: number, windowMs: number, nowMs: number): WindowState => ({
  allowed,
  limit,
  remaining: limit - size,
  resetAtMs: size > 0 ? oldestMs + windowMs : nowMs
})

/** X-RateLimit-Reset: whole UTC epoch seconds, rounded up so one more request is surely possible then. */
export const resetSeconds = (state: WindowState): number => Math.ceil(state.resetAtMs / 1000)

/** Retry-After of a 429: X-RateLimit-Reset minus now, rounded up, at least 1 (docs/product-rules.md#rate-limiting). */
export const retryAfterSeconds = (state: WindowState, nowMs: number): number =>
  Math.max(1, Math.ceil(resetSeconds(state) - nowMs / 1000))

export const rateLimitHeaders = (state: WindowState): Record<string, string> => ({
  "x-ratelimit-limit": String(state.limit),
  "x-ratelimit-remaining": String(state.remaining),
  "x-ratelimit-reset": String(resetSeconds(state))
})
