import { CallerIdentity, type InsufficientScope, NotFound, PublicApiPrefix, type RateLimited, Unauthenticated, type Unavailable } from "@portfolio/domain"
import type { PatRecord } from "../domain/PatRecord.js"
import type { WindowState } from "../domain/rate-limit/RateLimitWindow.js"
import { Clock, Effect, Either, Option } from "effect"
import { authorize, type Holder } from "../domain/Authorization.js"
import type { PublicRoute } from "../domain/AllowList.js"
import { RecentlyValidTokens } from "../ports/RecentlyValidTokens.js"
import { PartnerTokens, type PartnerAccess } from "../ports/PartnerTokens.js"
import { bearerToken, type Recognised, recognisePat, refusalOf, verifyPat } from "./AuthenticatePat.js"
import { parsePat } from "../domain/Pat.js"
import { PatCache } from "../ports/PatCache.js"
import { type Counted, countRequest, makeImmediateCounting, rateLimitedError, refuseSpentAddress, type Requester } from "./rate-limit/RateLimiting.js"

export interface PublicCall {
  readonly method: string
  /** Normalised path, /api/v1 prefix included, without query string. */
  readonly path: string
  /** The allow-list's route of method and path, matched once by the caller (it also names the request's span). */
  readonly route: PublicRoute | undefined
  readonly authorization: string | undefined
  readonly clientIp: string
}

/** Who a call was authenticated as: a PAT's holder, or a partner client by its access token. */
export type Credential =
  | { readonly _tag: "Pat"; readonly pat: PatRecord }
  | { readonly _tag: "Partner"; readonly access: PartnerAccess }

export interface Admitted {
  readonly route: PublicRoute
  readonly credential: Credential
  readonly caller: CallerIdentity
}

export type Rejection = Unauthenticated | RateLimited | NotFound | InsufficientScope | Unavailable

/** What the gateway decided, with the rate-limit window that every answer reports. */
export interface Verdict {
  readonly window: WindowState
  readonly decidedAtMs: number
  /** The caller's credential when it was authenticated, admitted or not: the request's span names its tenant and who it is. */
  readonly credential: Credential | undefined
  readonly outcome: Either.Either<Admitted, Rejection>
}

/**
 * A partner's access token is a JWT, whose three parts a dot separates; a PAT has no dot. Verified
 * locally, so neither a database round trip nor the guard of spent addresses applies to it.
 */
const isJwtShaped = (token: string) => token.includes(".")

const patCredential = (pat: PatRecord): Credential => ({ _tag: "Pat", pat })
const partnerCredential = (access: PartnerAccess): Credential => ({ _tag: "Partner", access })

const requesterOf = (credential: Credential): Requester =>
  credential._tag === "Pat" ? { patId: credential.pat.id } : { partnerClientId: credential.access.clientId }

const holderOf = (credential: Credential): Holder =>
  credential._tag === "Pat" ? credential.pat : { scope: credential.access.scope, role: "partner" }

/** The identity asserted to the services; the fields come from a stored record or a verified token: validating them again adds nothing. */
const callerOf = (credential: Credential) =>
  credential._tag === "Pat"
    ? new CallerIdentity({ tenantId: credential.pat.tenantId, subject: credential.pat.userSub, role: credential.pat.role, scope: credential.pat.scope }, true)
    : new CallerIdentity({ tenantId: credential.access.tenantId, subject: credential.access.clientId, role: "partner", scope: credential.access.scope }, true)

/** The admission's span, under the request's. */
export const AdmissionSpan = "gateway.admitRequest"

/**
 * The gateway's decision for a call under the public prefix, in the order of the contract:
 * authenticate, count against the rate limit, find the public route, check the scope, check the
 * role. A call without a valid token is counted against its client address instead, and answered
 * 429 rather than 401 once that address is over its limit; over it, only tokens recently verified
 * as valid are still looked up. A partner's access token is verified locally and counted against
 * its client (docs/product-rules.md#partner-clients). It runs on every proxied call, so its span
 * is added without the call-site stack capture of `Effect.fn`; the caller runs it inside the
 * request's server span.
 */
export const admitRequest = Effect.fnUntraced(function*(call: PublicCall) {
  const bearer = bearerToken(call.authorization)
  let countedForAddress = Option.none<Counted>()
  let authenticated: Either.Either<Credential, Unauthenticated | Unavailable>
  if (Either.isRight(bearer) && isJwtShaped(bearer.right)) {
    const partner = yield* Effect.either((yield* PartnerTokens).verify(bearer.right, yield* Clock.currentTimeMillis))
    authenticated = Either.map(partner, partnerCredential)
  } else {
    const recognised: Either.Either<Recognised, Unauthenticated> = Either.isLeft(bearer)
      ? Either.left(bearer.left)
      : yield* Effect.either(recognisePat(bearer.right))
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
    authenticated = Option.isSome(countedForAddress) && !countedForAddress.value.state.allowed
      ? Either.left(new Unauthenticated({ detail: "The token was not looked up: this client address is over its limit." }))
      : Either.isLeft(recognised)
      ? Either.left(recognised.left)
      : recognised.right._tag === "Cached"
      ? Either.right(patCredential(recognised.right.record))
      : Either.map(yield* Effect.either(verifyPat(recognised.right.pat)), patCredential)
  }
  const requester: Requester = Either.isRight(authenticated) ? requesterOf(authenticated.right) : { clientIp: call.clientIp }
  // An address counted above is not counted twice.
  const counted = Option.isSome(countedForAddress) && "clientIp" in requester ? countedForAddress.value : yield* countRequest(requester)
  const verdict = decide(call, counted, authenticated)
  if (counted.state.allowed && verdict.credential !== undefined) yield* Effect.annotateCurrentSpan(admissionAttributes(call, verdict.credential))
  return verdict
}, Effect.withSpan(AdmissionSpan))

/**
 * The rest of the admission once the call is authenticated (or not) and counted: refused over the
 * limit, then without a valid token, then off the allow-list, then by scope and role.
 */
const decide = (call: PublicCall, counted: Counted, authenticated: Either.Either<Credential, Unauthenticated | Unavailable>): Verdict => {
  const credential = Either.getOrUndefined(authenticated)
  const verdict = (outcome: Either.Either<Admitted, Rejection>): Verdict => ({ window: counted.state, decidedAtMs: counted.nowMs, credential, outcome })
  if (!counted.state.allowed) {
    return verdict(Either.left(rateLimitedError(counted, credential === undefined ? { clientIp: call.clientIp } : requesterOf(credential))))
  }
  if (Either.isLeft(authenticated)) return verdict(Either.left(authenticated.left))
  const authenticatedAs = authenticated.right
  const { route } = call
  if (route === undefined) {
    return verdict(Either.left(new NotFound({ detail: `${call.method} ${call.path} is not an endpoint of the public API.` })))
  }
  return verdict(
    Either.map(authorize(route, holderOf(authenticatedAs), call, PublicApiPrefix), (route) => ({ route, credential: authenticatedAs, caller: callerOf(authenticatedAs) }))
  )
}

/** What the admission's span tells of a call counted and admitted under the limit: who, and the route. */
export const admissionAttributes = (call: PublicCall, credential: Credential): Record<string, string> => ({
  ...(credential._tag === "Pat" ? { "pat.prefix": credential.pat.tokenPrefix } : { "partner.client_id": credential.access.clientId }),
  ...(call.route === undefined ? {} : { "http.route": call.route.template })
})

/**
 * The admission of a call that needs nothing but memory: a PAT verified in the last second (the
 * cache's life) and still valid, counted in a window this replica answers with no round trip
 * (RateLimitStore `admitNow`). It decides exactly as `admitRequest` does, without a fiber: on the
 * gateway's hot path a fiber, its span and the services' lookups cost more than the deciding. It
 * answers `undefined`, having counted nothing, for every other call: no token or a malformed one, a
 * partner's access token (verified asynchronously), a token to look up, revoked or expired, a window
 * that needs the shared store; `admitRequest` decides those.
 */
export const makeImmediateAdmission = Effect.gen(function*() {
  const cache = yield* PatCache
  const count = yield* makeImmediateCounting
  return (call: PublicCall, nowMs: number): Verdict | undefined => {
    const bearer = bearerToken(call.authorization)
    if (Either.isLeft(bearer) || isJwtShaped(bearer.right)) return undefined
    const pat = parsePat(bearer.right)
    if (Option.isNone(pat)) return undefined
    const record = cache.peek(pat.value.tokenHash, nowMs)
    if (record === undefined || refusalOf(record, nowMs) !== undefined) return undefined
    const counted = count({ patId: record.id }, nowMs)
    return counted === undefined ? undefined : decide(call, counted, Either.right(patCredential(record)))
  }
})
