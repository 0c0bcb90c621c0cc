import { CallerIdentity, type InsufficientScope, NotFound, PublicApiPrefix, type RateLimited, Unauthenticated, type Unavailable } from "@portfolio/domain"
import type { PatRecord } from "../domain/PatRecord.js"
import type { WindowState } from "../domain/RateLimitWindow.js"
import { Clock, Effect, Either, Option } from "effect"
import { authorize } from "../domain/Authorization.js"
import type { PublicRoute } from "../domain/AllowList.js"
import { RecentlyValidTokens } from "../ports/RecentlyValidTokens.js"
import { recognisePat, verifyPat } from "./AuthenticatePat.js"
import { type Counted, countRequest, rateLimitedError, refuseSpentAddress, type Requester } from "./RateLimiting.js"

export interface PublicCall {
  readonly method: string
  /** Normalised path, /api/v1 prefix included, without query string. */
  readonly path: string
  /** The allow-list's route of method and path, matched once by the caller (it also names the request's span). */
  readonly route: PublicRoute | undefined
  readonly authorization: string | undefined
  readonly clientIp: string
}

export interface Admitted {
  readonly route: PublicRoute
  readonly pat: PatRecord
  readonly caller: CallerIdentity
}

export type Rejection = Unauthenticated | RateLimited | NotFound | InsufficientScope | Unavailable

/** What the gateway decided, with the rate-limit window that every answer reports. */
export interface Verdict {
  readonly window: WindowState
  readonly decidedAtMs: number
  /** The caller's token when it was authenticated, admitted or not: the request's span names its tenant and prefix. */
  readonly pat: PatRecord | undefined
  readonly outcome: Either.Either<Admitted, Rejection>
}

/**
 * The gateway's decision for a call under the public prefix, in the order of the contract:
 * authenticate, count against the rate limit, find the public route, check the scope, check the
 * role. A call without a valid token is counted against its client address instead, and answered
 * 429 rather than 401 once that address is over its limit; over it, only tokens recently verified
 * as valid are still looked up. It runs on every proxied call, so its span
 * is added without the call-site stack capture of `Effect.fn`; the caller runs it inside the
 * request's server span.
 */
export const admitRequest = Effect.fnUntraced(function*(call: PublicCall) {
  const recognised = yield* Effect.either(recognisePat(call.authorization))
  let countedForAddress = Option.none<Counted>()
  if (Either.isRight(recognised) && recognised.right._tag === "Unverified") {
    // An address over its limit gets its 429 before the store is asked: otherwise every forged
    // well-formed token it sends costs a query. A token verified as valid in the last minutes
    // cannot be forged and is still looked up; one never seen here waits until the address's
    // window has room again (README, "Known limits").
    const nowMs = yield* Clock.currentTimeMillis
    if (!(yield* (yield* RecentlyValidTokens).has(recognised.right.pat.tokenHash, nowMs))) {
      countedForAddress = yield* refuseSpentAddress(call.clientIp)
    }
  }
  const authenticated: Either.Either<PatRecord, Unauthenticated | Unavailable> = Option.isSome(countedForAddress) && !countedForAddress.value.state.allowed
    ? Either.left(new Unauthenticated({ detail: "The token was not looked up: this client address is over its limit." }))
    : Either.isLeft(recognised)
    ? Either.left(recognised.left)
    : recognised.right._tag === "Cached"
    ? Either.right(recognised.right.record)
    : yield* Effect.either(verifyPat(recognised.right.pat))
  const requester: Requester = Either.isRight(authenticated) ? { patId: authenticated.right.id } : { clientIp: call.clientIp }
  // An address counted above is not counted twice.
  const counted = Option.isSome(countedForAddress) && "clientIp" in requester ? countedForAddress.value : yield* countRequest(requester)
  const verdict = (outcome: Either.Either<Admitted, Rejection>): Verdict => ({
    window: counted.state,
    decidedAtMs: counted.nowMs,
    pat: Either.isRight(authenticated) ? authenticated.right : undefined,
    outcome
  })
  if (!counted.state.allowed) return verdict(Either.left(rateLimitedError(counted, requester)))
  if (Either.isLeft(authenticated)) return verdict(Either.left(authenticated.left))

  const pat = authenticated.right
  yield* Effect.annotateCurrentSpan("pat.prefix", pat.tokenPrefix)
  const { route } = call
  if (route === undefined) {
    return verdict(Either.left(new NotFound({ detail: `${call.method} ${call.path} is not an endpoint of the public API.` })))
  }
  yield* Effect.annotateCurrentSpan("http.route", route.path)
  return verdict(
    Either.map(authorize(route, pat, call, PublicApiPrefix), (route) => ({
      route,
      pat,
      // The fields come from a stored, decoded token record: validating them again on every call adds nothing.
      caller: new CallerIdentity({ tenantId: pat.tenantId, subject: pat.userSub, role: pat.role, scope: pat.scope }, true)
    }))
  )
}, Effect.withSpan("gateway.admitRequest"))
