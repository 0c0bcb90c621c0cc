import type { InvalidRequest, PayloadTooLarge, Unavailable, UpstreamName } from "@portfolio/domain"
import { Context } from "effect"
import type http from "node:http"

export interface ForwardRequest {
  readonly upstream: UpstreamName
  readonly method: string
  /** Path and query string exactly as they go upstream. */
  readonly pathAndQuery: string
  /** The client's request, whose headers are filtered and whose body is read, then sent upstream. */
  readonly source: http.IncomingMessage
  /** The internal assertion for the body sent (`undefined`: none); asked again for each attempt. */
  readonly assertion: (body: Buffer | undefined) => string
  /** Headers the gateway adds (request id, forwarded-for, trace context). */
  readonly headers: Record<string, string>
  /** Where the upstream's answer goes. */
  readonly target: http.ServerResponse
  /** Headers the gateway sets on the answer, over the upstream's (rate limit, request id); see `upstreamAnswerHeaders`. */
  readonly answerHeaders: Record<string, string>
}

export type ForwardFailure = Unavailable | PayloadTooLarge | InvalidRequest

export interface UpstreamForwarderShape {
  /**
   * Sends the request upstream (its body read first, whole) and streams the upstream's answer into
   * `target`. When no answer head comes (no connection, timeout, body over the limit or not
   * UTF-8), `target` is left untouched and `onFailure` says why. A client that goes away cancels
   * the upstream call.
   */
  readonly forward: (request: ForwardRequest, onFailure: (failure: ForwardFailure) => void) => void
}

/** A port, so that tests can stand in for the upstream services and for their failures. */
export class UpstreamForwarder extends Context.Service<UpstreamForwarder, UpstreamForwarderShape>()("@portfolio/gateway/UpstreamForwarder") {}
