import { memoized } from "@portfolio/platform/cache"
import { guardedLookup as platformGuardedLookup } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"
import { lookup as dnsLookup } from "node:dns"
import type { LookupFunction } from "node:net"
import { StringDecoder } from "node:string_decoder"
import { Agent, type Dispatcher } from "undici"
import { type AttemptError, attemptErrorOf, plainError, RefusedTarget, refusalOf } from "../../domain/AttemptErrors.js"
import { targetRefusal } from "../../domain/TargetPolicy.js"
import { type SendOutcome, type WebhookRequest, WebhookSender } from "../../ports/WebhookSender.js"

export interface WebhookSenderUndiciSettings {
  /** The whole POST: connection, request, answer and the capped read of its body. */
  readonly timeoutMs: number
  /** Local use and tests only (docs/product-rules.md#webhooks): `http` and every address allowed. */
  readonly allowPrivateTargets: boolean
  /** `dns.lookup` unless given: tests answer names with the addresses they need. */
  readonly lookup?: LookupFunction
  /** Unbounded unless given. */
  readonly maxConnectionsPerOrigin?: number
}

/** How much of an answer is kept; the rest is never read (docs/product-rules.md#webhooks). */
export const ResponseBodyCap = 1024

/**
 * The platform's connection-time check of the receiver's addresses (DNS rebinding included), a
 * refusal being the delivery's `RefusedTarget` (docs/product-rules.md#webhooks).
 */
export const guardedLookup = (resolve: LookupFunction): LookupFunction =>
  platformGuardedLookup(resolve, (hostname, address, reason) => new RefusedTarget(hostname, address, reason))

const failed = (words: AttemptError, durationMs: number): SendOutcome => ({ _tag: "Failed", error: words.error, detail: words.detail, durationMs })

/**
 * One POST, driven through undici's dispatch handler rather than `request()`: no body stream to
 * build and drain, the 1 KB cap applied as the bytes arrive, and a single deadline covering the
 * whole exchange. Settles exactly once; whatever undici reports afterwards is ignored.
 */
class Delivery implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined
  private settled = false
  private status = 0
  private chunks: Array<Buffer> = []
  private left = ResponseBodyCap
  private readonly timer: NodeJS.Timeout

  constructor(
    private readonly started: number,
    private readonly timeout: string,
    timeoutMs: number,
    private readonly resolve: (outcome: SendOutcome) => void
  ) {
    this.timer = setTimeout(() => this.stop(this.timeout), timeoutMs)
  }

  /** Ends the POST without an answer: on the deadline, or when the delivery is interrupted. */
  stop(error: string) {
    if (this.settle(failed(plainError(error), this.elapsed()))) this.abort()
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller
    // Connected after the deadline: the request is dropped before a byte of it is written.
    if (this.settled) this.abort()
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number) {
    // 1xx answers are interim: the real one follows.
    if (statusCode >= 200) this.status = statusCode
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (this.settled || this.status === 0) return
    if (chunk.length < this.left) {
      this.chunks.push(chunk)
      this.left -= chunk.length
      return
    }
    this.chunks.push(chunk.subarray(0, this.left))
    // Cut inside a character: keep the whole ones only. The rest of the answer is never read.
    this.answer(new StringDecoder("utf8").write(Buffer.concat(this.chunks)))
    this.abort()
  }

  onResponseEnd() {
    const [only, ...more] = this.chunks
    this.answer(more.length === 0 ? (only?.toString("utf8") ?? "") : Buffer.concat(this.chunks).toString("utf8"))
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    this.settle(failed(attemptErrorOf(error, this.timeout), this.elapsed()))
  }

  private answer(responseBody: string) {
    // A NUL cannot be stored in a PostgreSQL text: an answer holding one would make its attempt
    // impossible to record, and the delivery be sent again and again.
    const storable = responseBody.includes("\u0000") ? responseBody.replaceAll("\u0000", "\ufffd") : responseBody
    this.settle({ _tag: "Answered", status: this.status, responseBody: storable, durationMs: this.elapsed() })
  }

  private settle(outcome: SendOutcome) {
    if (this.settled) return false
    this.settled = true
    clearTimeout(this.timer)
    this.resolve(outcome)
    return true
  }

  private abort() {
    if (this.controller !== undefined && !this.controller.aborted) this.controller.abort(new Error("delivery ended"))
  }

  private elapsed() {
    return Math.round(performance.now() - this.started)
  }
}

/**
 * POSTs a delivery through one undici `Agent` (keep-alive pools per origin), never following a
 * redirect and never failing: every problem is a `Failed` outcome.
 */
export const WebhookSenderUndici = (settings: WebhookSenderUndiciSettings) =>
  Layer.effect(
    WebhookSender,
    Effect.gen(function*() {
      const { allowPrivateTargets, timeoutMs } = settings
      const policy = { allowPrivateTargets }
      const timeout = `timeout after ${timeoutMs} ms`
      const resolveName: LookupFunction = settings.lookup ?? (dnsLookup as LookupFunction)
      const connect = allowPrivateTargets
        ? { timeout: timeoutMs, ...(settings.lookup ? { lookup: settings.lookup } : {}) }
        : { timeout: timeoutMs, lookup: guardedLookup(resolveName) }
      const agent = yield* Effect.acquireRelease(
        Effect.sync(() =>
          new Agent({
            connect,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
            ...(settings.maxConnectionsPerOrigin === undefined ? {} : { connections: settings.maxConnectionsPerOrigin })
          })
        ),
        (agent) => Effect.promise(() => agent.close())
      )

      // What a URL is to this sender, judged once per URL rather than at each POST (subscriptions
      // are few): where to connect and what to ask, or why it is refused before any connection.
      const judge = memoized((text: string): { readonly origin: string; readonly path: string } | { readonly refused: AttemptError } => {
        let url: URL
        try {
          url = new URL(text)
        } catch {
          return { refused: refusalOf({ _tag: "Url", detail: "not a URL" }) }
        }
        // node's `net.connect` never calls `lookup` for an IP literal: literals are judged here.
        const refusal = targetRefusal(url, policy)
        return refusal !== undefined ? { refused: refusalOf(refusal) } : { origin: url.origin, path: `${url.pathname}${url.search}` }
      })

      /** Starts the POST; `undefined` when it was refused before any connection (already resolved). */
      const start = (request: WebhookRequest, resolve: (outcome: SendOutcome) => void): Delivery | undefined => {
        const started = performance.now()
        const target = judge(request.url)
        if ("refused" in target) {
          resolve(failed(target.refused, Math.round(performance.now() - started)))
          return undefined
        }
        const delivery = new Delivery(started, timeout, timeoutMs, resolve)
        // No redirect interceptor is composed on this agent: a 3xx is the answer.
        agent.dispatch(
          { origin: target.origin, path: target.path, method: "POST", headers: request.headers, body: request.body },
          delivery
        )
        return delivery
      }

      return WebhookSender.of({
        send: (request) =>
          Effect.callback<SendOutcome>((resume) => {
            const delivery = start(request, (outcome) => resume(Effect.succeed(outcome)))
            // An interrupted delivery stops its request rather than letting it run to the deadline.
            return delivery === undefined ? undefined : Effect.sync(() => delivery.stop("interrupted"))
          })
      })
    })
  )
