import { HttpServerResponse } from "@effect/platform"
import { PayloadTooLarge, Unavailable, type UpstreamName } from "@portfolio/domain"
import { AssertionHeader } from "@portfolio/platform"
import { Context, Duration, Effect, Layer } from "effect"
import http from "node:http"
import https from "node:https"
import { Transform, type TransformCallback } from "node:stream"
import { GatewayConfig } from "../../GatewayConfig.js"

/** The largest request body the gateway forwards (decisions: 413 PAYLOAD_TOO_LARGE above). */
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
  "x-forwarded-for"
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
  /** Headers the gateway adds (assertion, request id, forwarded-for). */
  readonly headers: Record<string, string>
}

export interface UpstreamForwarderShape {
  readonly forward: (request: ForwardRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse, Unavailable | PayloadTooLarge>
}

/** Streams admitted requests to the service that answers them and streams the answer back as it is. */
export class UpstreamForwarder extends Context.Tag("@portfolio/gateway/UpstreamForwarder")<UpstreamForwarder, UpstreamForwarderShape>() {}

const serviceNames: Record<UpstreamName, string> = { referential: "referential service", provisioning: "provisioning service" }

export const UpstreamForwarderLive = Layer.scoped(
  UpstreamForwarder,
  Effect.gen(function*() {
    const config = yield* GatewayConfig
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
    const timeout = Duration.toMillis(config.upstreamTimeout)

    const send = (request: ForwardRequest, allowRetry: boolean): Effect.Effect<http.IncomingMessage, Unavailable | PayloadTooLarge> =>
      Effect.async<http.IncomingMessage, Unavailable | PayloadTooLarge | "stale-socket">((resume) => {
        const origin = config.upstreams[request.upstream]
        const secure = origin.protocol === "https:"
        const body = hasBody(request.source)
        const outgoing = (secure ? https : http).request({
          protocol: origin.protocol,
          hostname: origin.hostname,
          port: origin.port,
          method: request.method,
          path: request.pathAndQuery,
          headers: { ...copyHeaders(request.source.headers, notForwarded), ...request.headers, host: origin.host },
          agent: secure ? agents.https : agents.http
        })
        let tooLarge = false
        outgoing.once("response", (response) => resume(Effect.succeed(response)))
        outgoing.once("error", (error: NodeJS.ErrnoException) => {
          if (tooLarge) return resume(Effect.fail(new PayloadTooLarge({ detail: `The request body exceeds ${MaxBodyBytes} bytes.` })))
          // A pooled socket the upstream closed while idle fails on first write: safe to retry once without a body.
          if (allowRetry && !body && outgoing.reusedSocket && error.code === "ECONNRESET") return resume(Effect.fail("stale-socket" as const))
          resume(
            Effect.zipRight(
              Effect.logWarning("upstream request failed", { upstream: request.upstream, code: error.code ?? error.message }),
              Effect.fail(new Unavailable({ detail: `The ${serviceNames[request.upstream]} is unavailable; retry shortly.` }))
            )
          )
        })
        if (body) {
          const limit = bodyLimit(MaxBodyBytes)
          limit.once("error", (error) => {
            tooLarge = error instanceof BodyTooLarge
            request.source.unpipe(limit)
            outgoing.destroy(error)
          })
          request.source.pipe(limit).pipe(outgoing)
        } else {
          outgoing.end()
        }
        return Effect.sync(() => outgoing.destroy())
      }).pipe(
        Effect.catchIf((error): error is "stale-socket" => error === "stale-socket", () => send(request, false))
      )

    return UpstreamForwarder.of({
      forward: (request) =>
        // Server handlers run uninterruptibly by default; the timeout and client aborts must reach the socket.
        Effect.interruptible(send(request, true)).pipe(
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () => new Unavailable({ detail: `The ${serviceNames[request.upstream]} did not answer in time; retry shortly.` })
          }),
          Effect.map((response) =>
            HttpServerResponse.raw(response, {
              status: response.statusCode ?? 502,
              headers: copyHeaders(response.headers, notReturned)
            })
          ),
          Effect.withSpan("gateway.forward", { attributes: { "upstream.name": request.upstream } })
        )
    })
  })
)
