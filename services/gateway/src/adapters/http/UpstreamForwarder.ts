import { InvalidRequest, PayloadTooLarge, Unavailable, type UpstreamName } from "@portfolio/domain"
import { AssertionHeader, carriesBody, MaxBodyBytes } from "@portfolio/platform"
import { Context, Duration, Effect, Layer, Runtime } from "effect"
import http from "node:http"
import https from "node:https"
import { isUtf8 } from "node:buffer"
import { GatewayConfig } from "../../Config.js"
import { upstreamAnswerHeaders } from "./UpstreamAnswerHeaders.js"


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

/**
 * Reads the whole body, at most `max` bytes: the assertion names its digest, which must be known
 * before the first header goes upstream. `done` gets the bytes, or `undefined` once over the limit
 * (the rest is left unread, as the answer is a 413).
 */
const readBody = (source: http.IncomingMessage, max: number, done: (body: Buffer | undefined) => void) => {
  const chunks: Array<Buffer> = []
  let seen = 0
  const onData = (chunk: Buffer) => {
    seen += chunk.length
    if (seen <= max) return void chunks.push(chunk)
    source.off("data", onData)
    source.off("end", onEnd)
    source.pause()
    done(undefined)
  }
  const onEnd = () => done(Buffer.concat(chunks, seen))
  source.on("data", onData)
  source.once("end", onEnd)
  // A client that breaks off closes the answer too, which settles the call: nothing more to do here.
  source.once("error", () => {})
}

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

/**
 * Sends admitted requests to the service that answers them and streams the answer back as it is.
 * A body is read whole first (1 MiB at most), because the assertion names its digest; a request
 * without one goes at once. Plain node streams: this runs once per proxied request, where fibers
 * would cost more than the proxying.
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
      // The deadline covers the whole wait for the answer head: reading the body, and the stale-socket retry.
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

      const send = (body: Buffer | undefined, allowRetry: boolean) => {
        const attempt = (secure ? https : http).request({
          protocol: origin.protocol,
          hostname: origin.hostname,
          port: origin.port,
          method: request.method,
          path: request.pathAndQuery,
          // Each attempt is a request of its own for the upstream: a fresh single-use assertion.
          headers: {
            ...headers,
            [AssertionHeader]: request.assertion(body),
            ...(body === undefined ? {} : { "content-length": String(body.length) })
          },
          agent: secure ? agents.https : agents.http
        })
        outgoing = attempt
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
          // A pooled socket the upstream closed while idle fails on first write: safe to retry once without a body.
          if (allowRetry && body === undefined && attempt.reusedSocket && error.code === "ECONNRESET") return send(body, false)
          logWarning("upstream request failed", { upstream: request.upstream, code: error.code ?? error.message })
          fail(new Unavailable({ detail: `The ${serviceNames[request.upstream]} is unavailable; retry shortly.` }))
        })
        attempt.end(body)
      }

      if (!carriesBody(request.source.headers)) return send(undefined, true)
      readBody(request.source, MaxBodyBytes, (body) => {
        if (settled) return
        if (body === undefined) return fail(new PayloadTooLarge({ detail: `The request body exceeds ${MaxBodyBytes} bytes.` }))
        // The services read bodies as UTF-8 text (JSON is UTF-8, RFC 8259): bytes that are not would
        // reach the handler as other text than the bytes the assertion names.
        if (!isUtf8(body)) return fail(new InvalidRequest({ detail: "The request body is not valid UTF-8." }))
        send(body, true)
      })
    }

    return UpstreamForwarder.of({ forward })
  })
)
