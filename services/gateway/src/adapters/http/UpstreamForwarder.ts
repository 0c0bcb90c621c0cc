import { PayloadTooLarge, Unavailable, type UpstreamName } from "@portfolio/domain"
import { AssertionHeader } from "@portfolio/platform"
import { Context, Duration, Effect, Layer, Runtime } from "effect"
import http from "node:http"
import https from "node:https"
import { Transform, type TransformCallback } from "node:stream"
import { GatewayConfig } from "../../Config.js"
import { upstreamAnswerHeaders } from "./UpstreamAnswerHeaders.js"

/** The largest request body the gateway forwards (413 PAYLOAD_TOO_LARGE above, docs/decisions.md). */
export const MaxBodyBytes = 1024 * 1024

/** Headers that describe one connection, not the message, plus the credentials the gateway replaces. */
const notForwarded = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "host",
  "authorization",
  AssertionHeader,
  "x-request-id",
  "x-forwarded-for",
  // Trace context: the gateway's span is the upstream's parent, whatever the client claimed.
  "traceparent",
  "tracestate",
  "b3",
  "x-b3-traceid",
  "x-b3-spanid",
  "x-b3-parentspanid",
  "x-b3-sampled",
  "x-b3-flags"
])

const notReturned = new Set(["connection", "keep-alive", "proxy-authenticate", "trailer", "transfer-encoding", "upgrade", "proxy-connection"])

const connectionListed = (headers: http.IncomingHttpHeaders): ReadonlySet<string> =>
  new Set((headers.connection ?? "").split(",").map((token) => token.trim().toLowerCase()).filter((token) => token.length > 0))

const copyHeaders = (headers: http.IncomingHttpHeaders, drop: ReadonlySet<string>): Record<string, string> => {
  const listed = connectionListed(headers)
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || drop.has(name) || listed.has(name)) continue
    out[name] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

class BodyTooLarge extends Error {}

/** Passes the body through while counting it, and fails the stream as soon as it exceeds the limit. */
const bodyLimit = (max: number) => {
  let seen = 0
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      seen += chunk.length
      if (seen > max) callback(new BodyTooLarge())
      else callback(null, chunk)
    }
  })
}

const hasBody = (request: http.IncomingMessage) =>
  request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? "0") > 0

export interface ForwardRequest {
  readonly upstream: UpstreamName
  readonly method: string
  /** Path and query string exactly as they go upstream. */
  readonly pathAndQuery: string
  /** The client's request, whose headers are filtered and whose body is streamed upstream. */
  readonly source: http.IncomingMessage
  /** Headers the gateway adds (assertion, request id, forwarded-for, trace context). */
  readonly headers: Record<string, string>
  /** Where the upstream's answer goes. */
  readonly target: http.ServerResponse
  /** Headers the gateway sets on the answer, over the upstream's (rate limit, request id); see `upstreamAnswerHeaders`. */
  readonly answerHeaders: Record<string, string>
}

export type ForwardFailure = Unavailable | PayloadTooLarge

export interface UpstreamForwarderShape {
  /**
   * Streams the request upstream and the upstream's answer into `target`. When no answer head
   * comes (no connection, timeout, body over the limit), `target` is left untouched and
   * `onFailure` says why. A client that goes away cancels the upstream call.
   */
  readonly forward: (request: ForwardRequest, onFailure: (failure: ForwardFailure) => void) => void
}

/**
 * Streams admitted requests to the service that answers them and streams the answer back as it is.
 * Plain node streams: this runs once per proxied request, where fibers would cost more than the proxying.
 */
export class UpstreamForwarder extends Context.Tag("@portfolio/gateway/UpstreamForwarder")<UpstreamForwarder, UpstreamForwarderShape>() {}

const serviceNames: Record<UpstreamName, string> = { referential: "referential service", provisioning: "provisioning service" }

export const UpstreamForwarderLive = Layer.scoped(
  UpstreamForwarder,
  Effect.gen(function*() {
    const config = yield* GatewayConfig
    const runtime = yield* Effect.runtime<never>()
    const logWarning = (message: string, annotations: Record<string, string>) =>
      Runtime.runFork(runtime)(Effect.logWarning(message, annotations))
    // One keep-alive pool per upstream; LIFO reuse keeps few sockets warm and lets idle ones expire.
    const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: "lifo" as const, timeout: 60_000 }
    const agents = yield* Effect.acquireRelease(
      Effect.sync(() => ({
        http: new http.Agent(agentOptions),
        https: new https.Agent(agentOptions)
      })),
      (pool) => Effect.sync(() => {
        pool.http.destroy()
        pool.https.destroy()
      })
    )
    const timeoutMs = Duration.toMillis(config.upstreamTimeout)

    const forward = (request: ForwardRequest, onFailure: (failure: ForwardFailure) => void) => {
      const origin = config.upstreams[request.upstream]
      const secure = origin.protocol === "https:"
      const body = hasBody(request.source)
      const headers = { ...copyHeaders(request.source.headers, notForwarded), ...request.headers, host: origin.host }
      let outgoing: http.ClientRequest | undefined
      let settled = false
      const fail = (failure: ForwardFailure) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        outgoing?.destroy()
        onFailure(failure)
      }
      // The deadline covers the whole wait for the answer head, the stale-socket retry included.
      const timer = setTimeout(
        () => fail(new Unavailable({ detail: `The ${serviceNames[request.upstream]} did not answer in time; retry shortly.` })),
        timeoutMs
      )
      const { target } = request
      target.once("close", () => {
        if (!target.writableFinished) {
          settled = true
          clearTimeout(timer)
          outgoing?.destroy()
        }
      })

      const send = (allowRetry: boolean) => {
        const attempt = (secure ? https : http).request({
          protocol: origin.protocol,
          hostname: origin.hostname,
          port: origin.port,
          method: request.method,
          path: request.pathAndQuery,
          headers,
          agent: secure ? agents.https : agents.http
        })
        outgoing = attempt
        let tooLarge = false
        attempt.once("response", (response) => {
          if (settled) return void response.destroy()
          settled = true
          clearTimeout(timer)
          response.once("error", () => target.destroy())
          response.once("aborted", () => target.destroy())
          const status = response.statusCode ?? 502
          target.writeHead(status, upstreamAnswerHeaders(status, copyHeaders(response.headers, notReturned), request.answerHeaders))
          response.pipe(target)
        })
        attempt.once("error", (error: NodeJS.ErrnoException) => {
          if (settled) return
          if (tooLarge) return fail(new PayloadTooLarge({ detail: `The request body exceeds ${MaxBodyBytes} bytes.` }))
          // A pooled socket the upstream closed while idle fails on first write: safe to retry once without a body.
          if (allowRetry && !body && attempt.reusedSocket && error.code === "ECONNRESET") return send(false)
          logWarning("upstream request failed", { upstream: request.upstream, code: error.code ?? error.message })
          fail(new Unavailable({ detail: `The ${serviceNames[request.upstream]} is unavailable; retry shortly.` }))
        })
        if (body) {
          const limit = bodyLimit(MaxBodyBytes)
          limit.once("error", (error) => {
            tooLarge = error instanceof BodyTooLarge
            request.source.unpipe(limit)
            attempt.destroy(error)
          })
          request.source.pipe(limit).pipe(attempt)
        } else {
          attempt.end()
        }
      }
      send(true)
    }

    return UpstreamForwarder.of({ forward })
  })
)
