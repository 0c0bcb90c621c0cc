import { unavailableRetryAfterSeconds } from "@portfolio/platform/http"

// The same wait as every service's own 503s.
const UnavailableRetryAfter = String(unavailableRetryAfterSeconds)

const rateLimitHeaderNames = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]

/**
 * The headers of an upstream's answer as the client gets them: the upstream's, with the gateway's
 * own (`gateway`: its rate-limit window and request id) set over them, except where the
 * upstream's say more:
 * - a 429 that carries `X-RateLimit-Reset` was refused by the upstream's own limit (provisioning's
 *   invitations per hour), and its `X-RateLimit-*` and `Retry-After` describe that limit: the
 *   gateway's per-token window there would give a `Reset` that disagrees with `Retry-After`. An
 *   upstream that gives `Reset` alone still refused: `Remaining` is 0, and `Limit` stays the
 *   gateway's, the only one known, so that every answer carries the three headers (docs/product-rules.md#rate-limiting);
 * - a 503 always says when to retry (docs/product-rules.md#rate-limiting), the services' own included.
 *
 * A list's `Link: <...>; rel="next"` passes as written: the services write that reference
 * relative to the request's URL (docs/product-rules.md#lists), and the path here is the path the
 * client called, so it resolves at whatever public address (host, proxy prefix) the client used,
 * which the gateway could only guess.
 */
export const upstreamAnswerHeaders = (
  status: number,
  upstream: Record<string, string>,
  gateway: Record<string, string>
): Record<string, string> => {
  const merged: Record<string, string> = { ...upstream, ...gateway }
  if (status === 429 && upstream["x-ratelimit-reset"] !== undefined) {
    for (const name of rateLimitHeaderNames) {
      const value = upstream[name] ?? (name === "x-ratelimit-remaining" ? "0" : gateway[name])
      if (value !== undefined) merged[name] = value
    }
  }
  if (status === 503 && merged["retry-after"] === undefined) merged["retry-after"] = UnavailableRetryAfter
  return merged
}
