import { Context, type Effect } from "effect"

/** One POST of a delivery, its body already in the exact bytes that were signed. */
export interface WebhookRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * What came of one POST. `Answered` is any HTTP answer (a 3xx included: redirects are never
 * followed); `Failed` is no answer at all: timeout, connection refused, TLS failure, or a target
 * the address policy refused (docs/product-rules.md#webhooks). `responseBody` is the first 1 KB only.
 * A failure's `error` is recorded with the attempt and shown to the tenant: never an address
 * (domain/AttemptErrors.ts); its `detail`, the addresses and messages behind it, is only logged.
 */
export type SendOutcome =
  | { readonly _tag: "Answered"; readonly status: number; readonly responseBody: string; readonly durationMs: number }
  | { readonly _tag: "Failed"; readonly error: string; readonly detail?: string; readonly durationMs: number }

export interface WebhookSenderShape {
  /**
   * Never fails: every way a POST can go wrong is an outcome to record. Interrupted, it stops the
   * POST rather than letting it run to its deadline.
   */
  readonly send: (request: WebhookRequest) => Effect.Effect<SendOutcome>
}

export class WebhookSender extends Context.Service<WebhookSender, WebhookSenderShape>()("@portfolio/webhook-dispatcher/WebhookSender") {}
