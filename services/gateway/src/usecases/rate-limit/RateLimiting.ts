import { RateLimited } from "@portfolio/domain"
import { instrument } from "@portfolio/platform/telemetry"
import { RateLimitStore } from "../../ports/rate-limit/RateLimitStore.js"
import { type WindowState } from "../../domain/rate-limit/RateLimitWindow.js"
import { Clock, Effect, Option } from "effect"
import { retryAfterSeconds } from "../../domain/rate-limit/RateLimitWindow.js"
import { GatewaySettings, type RateLimitPolicy } from "../../Config.js"
import { SpentAddresses } from "../../ports/rate-limit/SpentAddresses.js"

/**
 * Whose requests are counted: a PAT's (by its id), a partner client's (whatever token it presents),
 * a SCIM token's (by its id), or a client address's when there is no valid token.
 */
export type Requester =
  | { readonly patId: string }
  | { readonly partnerClientId: string }
  | { readonly scimTokenId: string }
  | { readonly clientIp: string }

export interface Counted {
  readonly state: WindowState
  readonly nowMs: number
}

const keyOf = (requester: Requester) =>
  "patId" in requester
    ? `pat:${requester.patId}`
    : "partnerClientId" in requester
    ? `partner:${requester.partnerClientId}`
    : "scimTokenId" in requester
    ? `scim:${requester.scimTokenId}`
    : `ip:${requester.clientIp}`

type Kind = "token" | "partner" | "scim" | "address"

const kindOf = (requester: Requester): Kind =>
  "patId" in requester ? "token" : "partnerClientId" in requester ? "partner" : "scimTokenId" in requester ? "scim" : "address"

const limitOf = (rateLimit: RateLimitPolicy, requester: Requester): number => {
  switch (kindOf(requester)) {
    case "token":
      return rateLimit.perToken
    case "partner":
      return rateLimit.perPartner
    case "scim":
      return rateLimit.perScimToken
    case "address":
      return rateLimit.perAnonymousIp
  }
}

/**
 * Each decision of the limit, by what was counted (a token, a partner client, a SCIM token, or the
 * address of a call without any) and what was decided; the attribute sets are made once, as it runs on every call.
 */
const decisions = instrument((meter) => {
  const counter = meter.createCounter("portfolio.gateway.rate_limit.decisions", {
    unit: "{request}",
    description: "Rate-limit decisions of the gateway: admitted or refused (429), per token, partner client, SCIM token or client address."
  })
  const attributes = (kind: string) => ({
    admitted: { decision: "admitted", kind },
    refused: { decision: "refused", kind }
  })
  const byKind = { token: attributes("token"), partner: attributes("partner"), scim: attributes("scim"), address: attributes("address") }
  // Every series exported at 0 from the first decision on: a series first scraped at 1 shows rate()
  // no increase, so a first refusal would be missing from the refused share and its alert.
  for (const sets of Object.values(byKind)) for (const set of Object.values(sets)) counter.add(0, set)
  return (requester: Requester, admitted: boolean) => counter.add(1, byKind[kindOf(requester)][admitted ? "admitted" : "refused"])
})

/** Counts one request in the requester's sliding window. No span of its own: it runs on every call, inside the caller's. */
export const countRequest = Effect.fnUntraced(function*(requester: Requester) {
  const { rateLimit } = yield* GatewaySettings
  const store = yield* RateLimitStore
  const recordDecision = yield* decisions
  const nowMs = yield* Clock.currentTimeMillis
  const state = yield* store.hit(keyOf(requester), limitOf(rateLimit, requester), rateLimit.windowMs, nowMs)
  recordDecision(requester, state.allowed)
  if ("clientIp" in requester && state.remaining === 0) yield* (yield* SpentAddresses).markSpent(requester.clientIp, state.resetAtMs)
  return { state, nowMs } satisfies Counted
})

/**
 * The refusal of a client address already known to be over its limit, counted (that is, refused
 * and not counted) in its window so that the answer reports it; `None` when the address has room.
 */
export const refuseSpentAddress = Effect.fnUntraced(function*(clientIp: string) {
  const spent = yield* SpentAddresses
  if (!(yield* spent.isSpent(clientIp, yield* Clock.currentTimeMillis))) return Option.none<Counted>()
  return Option.some(yield* countRequest({ clientIp }))
})

export const rateLimitedError = (counted: Counted, requester: Requester) =>
  new RateLimited({
    detail: `${{ token: "This token", partner: "This partner client", scim: "This SCIM token", address: "This client address" }[kindOf(requester)]} made ${counted.state.limit} requests in the last 60 seconds, ` +
      `the most allowed; retry after ${retryAfterSeconds(counted.state, counted.nowMs)} seconds.`
  })
