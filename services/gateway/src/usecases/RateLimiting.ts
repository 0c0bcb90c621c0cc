import { RateLimited } from "@portfolio/domain"
import { RateLimitStore, type WindowState } from "@portfolio/domain/ports/gateway/RateLimitStore"
import { Clock, Effect } from "effect"
import { retryAfterSeconds } from "../core/RateLimitHeaders.js"
import { GatewayConfig } from "../GatewayConfig.js"

/** Whose requests are counted: a token's (by its id), or a client address's when there is no valid token. */
export type Requester = { readonly patId: string } | { readonly clientIp: string }

export interface Counted {
  readonly state: WindowState
  readonly nowMs: number
}

const keyOf = (requester: Requester) => ("patId" in requester ? `pat:${requester.patId}` : `ip:${requester.clientIp}`)

/** Counts one request in the requester's sliding window. No span of its own: it runs on every call, inside the caller's. */
export const countRequest = Effect.fnUntraced(function*(requester: Requester) {
  const { rateLimit } = yield* GatewayConfig
  const store = yield* RateLimitStore
  const nowMs = yield* Clock.currentTimeMillis
  const limit = "patId" in requester ? rateLimit.perToken : rateLimit.perAnonymousIp
  const state = yield* store.hit(keyOf(requester), limit, rateLimit.windowMs, nowMs)
  return { state, nowMs } satisfies Counted
})

export const rateLimitedError = (counted: Counted, requester: Requester) =>
  new RateLimited({
    detail: `${"patId" in requester ? "This token" : "This client address"} made ${counted.state.limit} requests in the last 60 seconds, ` +
      `the most allowed; retry after ${retryAfterSeconds(counted.state, counted.nowMs)} seconds.`
  })
