import type { ApiError } from "@portfolio/domain"
import type { WindowState } from "@portfolio/domain/ports/gateway/RateLimitStore"
import { retryAfterSeconds } from "../../core/RateLimitHeaders.js"

/** Seconds a client should wait after a 503 before retrying. */
const UnavailableRetryAfter = "5"

/** The headers that tell a refused client what to do next: when to retry, or how to authenticate. */
export const rejectionHeaders = (error: ApiError, window: WindowState, nowMs: number): Record<string, string> => {
  switch (error._tag) {
    case "RateLimited":
      return { "retry-after": String(retryAfterSeconds(window, nowMs)) }
    case "Unauthenticated":
      return { "www-authenticate": "Bearer realm=\"api\"" }
    case "Unavailable":
      return { "retry-after": UnavailableRetryAfter }
    case "PayloadTooLarge":
      return { connection: "close" }
    default:
      return {}
  }
}
