import { InvalidRequest, PayloadTooLarge, Unavailable, type UpstreamName } from "@portfolio/domain"
import { carriesBody, MaxBodyBytes } from "@portfolio/platform/http"
import { makePassedChunksCollector } from "@portfolio/platform/runtime"
import { AssertionHeader } from "@portfolio/platform/security"
import { Context, Duration, Effect, Layer } from "effect"
import type http from "node:http"
import { isUtf8 } from "node:buffer"
import { Agent, type Dispatcher } from "undici"
import { GatewaySettings } from "../../Config.js"
import { type ForwardFailure, type ForwardRequest, UpstreamForwarder } from "../../ports/UpstreamForwarder.js"
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

const connectionListed = (connection: string): ReadonlySet<string> =>
  connection === "" ? NoNames : new Set(connection.split(",").map((token) => token.trim().toLowerCase()).filter((token) => token.length > 0))
const NoNames: ReadonlySet<string> = new Set()

const copyHeaders = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>, drop: ReadonlySet<string>): Record<string, string> => {
  const connection = headers["connection"]
  const listed = connectionListed(typeof connection === "string" ? connection : connection?.join(",") ?? "")
  const out: Record<string, string> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value === undefined || drop.has(name) || listed.has(name)) continue
    out[name] = typeof value === "string" ? value : value.join(", ")
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


const serviceNames: Record<UpstreamName, string> = { referential: "referential service", provisioning: "provisioning service" }

/** Methods a request may be sent again for when the connection broke before any answer: they change nothing twice. */
const idempotent = new Set(["GET", "HEAD", "OPTIONS", "DELETE"])
/** The connection broke under the request: a pooled connection the upstream had just closed, typically. */
const connectionBroke = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"])

/**
 * What an answer may hold in memory for a slow client before its upstream waits: a few of the
 * upstream's 64 KiB reads, and no more than 256 KiB per answer however many are under way.
 */
const MaxHeldAnswerBytes = 256 * 1024

/** What the forwarder tells of each chunk of an answer it copied through, its bytes: the young collection's count (makePassedChunksCollector), unless a test listens. */
export const CopiedAnswers = Context.Reference<(bytes: number) => void>("@portfolio/gateway/CopiedAnswers", {
  defaultValue: makePassedChunksCollector
})

const codeOf = (error: Error): string => {
  const code = (error as { code?: unknown }).code
  return typeof code === "string" ? code : error.message
}

/**
 * One upstream exchange, from the request's dispatch to the end of the answer copied into the
 * client's response. Its owner settles once: the head arriving, or a failure before it.
 */
class UpstreamExchange implements Dispatcher.DispatchHandler {
  controller: Dispatcher.DispatchController | undefined
  private started = false

  constructor(
    private readonly target: http.ServerResponse,
    /** True once the caller has settled (timeout, client gone): a late head is dropped. */
    private readonly settled: () => boolean,
    /** The head arrived first: the caller settles, and the answer is copied. */
    private readonly onHead: () => boolean,
    private readonly answerHeaders: (status: number, upstream: Record<string, string>) => Record<string, string>,
    private readonly onFailureBeforeHead: (error: Error) => void,
    /** The bytes of each chunk of the answer copied through. */
    private readonly copied: (bytes: number) => void
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller
    if (this.settled()) controller.abort(new Error("the exchange already ended"))
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | Array<string> | undefined>) {
    // 1xx answers are interim: the real one follows.
    if (statusCode < 200) return
    if (!this.onHead()) return controller.abort(new Error("the exchange already ended"))
    this.started = true
    this.target.writeHead(statusCode, this.answerHeaders(statusCode, copyHeaders(headers, notReturned)))
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (!this.started) return
    this.target.write(chunk)
    this.copied(chunk.length)
    // The client reads slower than the upstream answers: the upstream waits (backpressure), once
    // this much is held for the client rather than at the response's 16 KiB mark, where a large
    // answer (a 1.6 MB tree) would stop and resume the upstream at every chunk.
    if (this.target.writableLength > MaxHeldAnswerBytes && !controller.paused) {
      controller.pause()
      this.target.once("drain", () => controller.resume())
    }
  }

  onResponseEnd() {
    if (!this.started) return
    this.target.end()
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    // Broken mid-answer: the client sees a cut answer, never a completed one.
    if (this.started) return void this.target.destroy()
    this.onFailureBeforeHead(error)
  }
}

/**
 * Sends admitted requests to the service that answers them and streams the answer back as it is.
 * A body is read whole first (1 MiB at most), because the assertion names its digest; a request
 * without one goes at once. Plain node streams and undici's dispatch handler: this runs once per
 * proxied request, where fibers would cost more than the proxying, and undici's client costs about
 * half of node's `http.request` per request here (measured: 39-66 against 80-92 us of CPU).
 */
export const UpstreamForwarderHttp = Layer.effect(
  UpstreamForwarder,
  Effect.gen(function*() {
    const config = yield* GatewaySettings
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    const logWarning = (message: string, annotations: Record<string, string>) => runFork(Effect.logWarning(message, annotations))
    const timeoutMs = Duration.toMillis(config.upstreamTimeout)
    // One keep-alive pool per upstream origin. The wait for the answer head is bounded by the
    // forwarder's own deadline; an answer that stalls midway, by the body timeout.
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => new Agent({ connections: 256, keepAliveTimeout: 60_000, headersTimeout: timeoutMs, bodyTimeout: 60_000 })),
      (agent) => Effect.promise(() => agent.destroy())
    )
    const copied = yield* CopiedAnswers

    const forward = (request: ForwardRequest, onFailure: (failure: ForwardFailure) => void) => {
      const origin = config.upstreams[request.upstream]
      const headers = { ...copyHeaders(request.source.headers, notForwarded), ...request.headers }
      let exchange: UpstreamExchange | undefined
      let settled = false
      const fail = (failure: ForwardFailure) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        exchange?.controller?.abort(new Error("the exchange failed"))
        onFailure(failure)
      }
      // The deadline covers the whole wait for the answer head: reading the body, and the broken-connection retry.
      const timer = setTimeout(
        () => fail(new Unavailable({ detail: `The ${serviceNames[request.upstream]} did not answer in time; retry shortly.` })),
        timeoutMs
      )
      const { target } = request
      target.once("close", () => {
        if (!target.writableFinished) {
          settled = true
          clearTimeout(timer)
          exchange?.controller?.abort(new Error("the client went away"))
        }
      })

      const send = (body: Buffer | undefined, allowRetry: boolean) => {
        const attempt = new UpstreamExchange(
          target,
          () => settled,
          () => {
            if (settled) return false
            settled = true
            clearTimeout(timer)
            return true
          },
          (status, upstream) => upstreamAnswerHeaders(status, upstream, request.answerHeaders),
          (error) => {
            if (settled) return
            const code = codeOf(error)
            if (allowRetry && body === undefined && idempotent.has(request.method) && connectionBroke.has(code)) return send(body, false)
            logWarning("upstream request failed", { upstream: request.upstream, code })
            fail(new Unavailable({ detail: `The ${serviceNames[request.upstream]} is unavailable; retry shortly.` }))
          },
          copied
        )
        exchange = attempt
        agent.dispatch({
          origin: origin.origin,
          method: request.method as Dispatcher.HttpMethod,
          path: request.pathAndQuery,
          // Each attempt is a request of its own for the upstream: a fresh single-use assertion.
          headers: { ...headers, [AssertionHeader]: request.assertion(body) },
          body: body ?? null
        }, attempt)
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
