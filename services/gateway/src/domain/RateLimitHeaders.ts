import type { WindowState } from "../ports/RateLimitStore.js"

/** X-RateLimit-Reset: whole UTC epoch seconds, rounded up so one more request is surely possible then. */
export const resetSeconds = (state: WindowState): number => Math.ceil(state.resetAtMs / 1000)

/** Retry-After of a 429: X-RateLimit-Reset minus now, rounded up, at least 1 (docs/decisions.md). */
export const retryAfterSeconds = (state: WindowState, nowMs: number): number =>
  Math.max(1, Math.ceil(resetSeconds(state) - nowMs / 1000))

export const rateLimitHeaders = (state: WindowState): Record<string, string> => ({
  "x-ratelimit-limit": String(state.limit),
  "x-ratelimit-remaining": String(state.remaining),
  "x-ratelimit-reset": String(resetSeconds(state))
})
