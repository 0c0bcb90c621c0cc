import type { HttpServerRequest } from "effect/http"
import { Option } from "effect"

/**
 * The client's address: the socket's `peer`, or, behind `trustedProxyHops` reverse proxies, the
 * entry of `X-Forwarded-For` that the outermost trusted proxy appended (entries further left are
 * the client's to write, and prove nothing).
 */
export const clientAddress = (peer: string | undefined, forwardedFor: string | undefined, trustedProxyHops: number): string => {
  const socketPeer = peer ?? "unknown"
  if (trustedProxyHops === 0) return socketPeer
  const forwarded = (forwardedFor ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  return forwarded[forwarded.length - trustedProxyHops] ?? socketPeer
}

/** How much of a User-Agent a security log keeps. */
export const UserAgentMaxLength = 300

/** Who sent a request, as a security log records it: the client's address and its user agent. */
export interface RequestOrigin {
  readonly ip: string
  readonly userAgent: string
}

/** The origin of `request` behind `trustedProxyHops` proxies (clientAddress), its user agent cut to what the log keeps. */
export const requestOrigin = (request: HttpServerRequest.HttpServerRequest, trustedProxyHops: number): RequestOrigin => ({
  ip: clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], trustedProxyHops),
  userAgent: (request.headers["user-agent"] ?? "").slice(0, UserAgentMaxLength)
})
