import type { ApiError } from "@portfolio/domain"
import type { WindowState } from "../../domain/rate-limit/RateLimitWindow.js"
import { retryAfterSeconds } from "../../domain/rate-limit/RateLimitWindow.js"

/**
 * The headers that tell a refused client what to do next: when to retry, or how to authenticate.
 * A 503's Retry-After is not here: the problem writer gives every 503 one.
 */
export const rejectionHeaders = (error: ApiError, window: WindowState, nowMs: number): Record<string, string> => {
  switch (error._tag) {
    case "RateLimited":
      return { "retry-after": String(retryAfterSeconds(window, nowMs)) }
    case "Unauthenticated":
      return { "www-authenticate": "Bearer realm=\"api\"" }
    case "PayloadTooLarge":
      return { connection: "close" }
    default:
      return {}
  }
}
