import { CallerIdentity, type InsufficientScope, NotFound, PublicApiPrefix, type RateLimited, Unauthenticated, type Unavailable, trusted } from "@portfolio/domain"
import type { PatRecord } from "../domain/PatRecord.js"
import type { WindowState } from "../domain/rate-limit/RateLimitWindow.js"
import { Clock, Effect, Result, Option } from "effect"
import { authorize, type Holder } from "../domain/Authorization.js"
import { offListDetail, type PublicRoute } from "../domain/AllowList.js"
import { RecentlyValidTokens } from "../ports/RecentlyValidTokens.js"
import { PartnerTokens, type PartnerAccess } from "../ports/PartnerTokens.js"
import { bearerToken, recognisePat, verifyPat } from "./AuthenticatePat.js"
import { recogniseScimToken, verifyScimToken } from "./AuthenticateScimToken.js"
import type { Recognised } from "./AuthenticateToken.js"
import { claimsScim, type ScimTokenRecord } from "../domain/ScimToken.js"
import type { WellFormedToken } from "../domain/TokenFormat.js"
import type { PatCache } from "../ports/PatCache.js"
import type { PatRepository } from "../ports/PatRepository.js"
import type { ScimTokenCache } from "../ports/ScimTokenCache.js"
import type { ScimTokenRepository } from "../ports/ScimTokenRepository.js"
import { type Counted, countRequest, rateLimitedError, refuseSpentAddress, type Requester } from "./rate-limit/RateLimiting.js"

export interface PublicCall {
  readonly method: string
  /** Normalised path, /api/v1 prefix included, without query string. */
  readonly path: string
  /** The allow-list's route of method and path, matched once by the caller (it also names the request's span). */
  readonly route: PublicRoute | undefined
  readonly authorization: string | undefined
  readonly clientIp: string
}

/** Who a call was authenticated as: a PAT's holder, a partner client by its access token, or a tenant's SCIM token. */
export type Credential =
  | { readonly _tag: "Pat"; readonly pat: PatRecord }
  | { readonly _tag: "Partner"; readonly access: PartnerAccess }
  | { readonly _tag: "Scim"; readonly token: ScimTokenRecord }

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
  readonly outcome: Result.Result<Admitted, Rejection>
}

/**
 * A partner's access token is a JWT, whose three parts a dot separates; a PAT has no dot. Verified
 * locally, so neither a database round trip nor the guard of spent addresses applies to it.
 */
const isJwtShaped = (token: string) => token.includes(".")

const patCredential = (pat: PatRecord): Credential => ({ _tag: "Pat", pat })
const partnerCredential = (access: PartnerAccess): Credential => ({ _tag: "Partner", access })
const scimCredential = (token: ScimTokenRecord): Credential => ({ _tag: "Scim", token })

const requesterOf = (credential: Credential): Requester => {
  switch (credential._tag) {
    case "Pat":
      return { patId: credential.pat.id }
    case "Partner":
      return { partnerClientId: credential.access.clientId }
    case "Scim":
      return { scimTokenId: credential.token.id }
  }
}

/** A SCIM token may write its tenant's Users: `write` is the scope of every SCIM endpoint that changes them. */
const scimHolder: Holder = { scope: "write", role: "scim" }

const holderOf = (credential: Credential): Holder => {
  switch (credential._tag) {
    case "Pat":
      return credential.pat
    case "Partner":
      return { scope: credential.access.scope, role: "partner" }
    case "Scim":
      return scimHolder
  }
}

/** The identity asserted to the services; the fields come from a stored record or a verified token: validating them again adds nothing. */
const callerOf = (credential: Credential) => {
  switch (credential._tag) {
    case "Pat":
      return trusted(CallerIdentity, { tenantId: credential.pat.tenantId, subject: credential.pat.userSub, role: credential.pat.role, scope: credential.pat.scope })
    case "Partner":
      return trusted(CallerIdentity, { tenantId: credential.access.tenantId, subject: credential.access.clientId, role: "partner", scope: credential.access.scope })
    case "Scim":
      return trusted(CallerIdentity, { tenantId: credential.token.tenantId, subject: `scim:${credential.token.id}`, role: "scim", scope: "write" })
  }
}

/** A stored token of either kind, recognised without the store: its credential from the cache, or what to look up. */
type RecognisedToken =
  | { readonly _tag: "Cached"; readonly credential: Credential }
  | { readonly _tag: "Unverified"; readonly kind: "Pat" | "Scim"; readonly token: WellFormedToken }

const asCredential = <T>(kind: "Pat" | "Scim", credentialOf: (record: T) => Credential) => (recognised: Recognised<T>): RecognisedToken =>
  recognised._tag === "Cached" ? { _tag: "Cached", credential: credentialOf(recognised.record) } : { _tag: "Unverified", kind, token: recognised.token }

/** A token that starts as a SCIM token is one, or a malformed one: never read as a PAT. */
const recogniseStored = (token: string): Effect.Effect<RecognisedToken, Unauthenticated, PatCache | ScimTokenCache> =>
  claimsScim(token)
    ? Effect.map(recogniseScimToken(token), asCredential("Scim", scimCredential))
    : Effect.map(recognisePat(token), asCredential("Pat", patCredential))

const verifyStored = (
  unverified: Extract<RecognisedToken, { _tag: "Unverified" }>
): Effect.Effect<Credential, Unauthenticated | Unavailable, PatRepository | PatCache | ScimTokenRepository | ScimTokenCache | RecentlyValidTokens> =>
  unverified.kind === "Scim"
    ? Effect.map(verifyScimToken(unverified.token), scimCredential)
    : Effect.map(verifyPat(unverified.token), patCredential)

/** The admission's span, under the request's. */
export const AdmissionSpan = "gateway.admitRequest"

/**
 * The gateway's decision for a call under the public prefix, in the order of the contract:
 * authenticate, count against the rate limit, find the public route, check the kind of credential,
 * the scope, the role. A call without a valid token is counted against its client address
 * instead, and answered 429 rather than 401 once that address is over its limit; over it, only
 * tokens recently verified as valid are still looked up. A partner's access token is verified
 * locally and counted against its client (docs/product-rules.md#partner-clients); a SCIM token is
 * looked up as a PAT is, and counted against itself under its own limit (docs/scim.md). It runs on
 * every proxied call, so its span is added without the call-site stack capture of `Effect.fn`; the
 * caller runs it inside the request's server span.
 */
export const admitRequest = Effect.fnUntraced(function*(call: PublicCall) {
  const bearer = bearerToken(call.authorization)
  let countedForAddress = Option.none<Counted>()
  let authenticated: Result.Result<Credential, Unauthenticated | Unavailable>
  if (Result.isSuccess(bearer) && isJwtShaped(bearer.success)) {
    const partner = yield* Effect.result((yield* PartnerTokens).verify(bearer.success, yield* Clock.currentTimeMillis))
    authenticated = Result.map(partner, partnerCredential)
  } else {
    const recognised: Result.Result<RecognisedToken, Unauthenticated> = Result.isFailure(bearer)
      ? Result.fail(bearer.failure)
      : yield* Effect.result(recogniseStored(bearer.success))
    if (Result.isSuccess(recognised) && recognised.success._tag === "Unverified") {
      // An address over its limit gets its 429 before the store is asked: otherwise every forged
      // well-formed token it sends costs a query. A token verified as valid in the last minutes
      // cannot be forged and is still looked up; one never seen here waits until the address's
      // window has room again (README, "Known limits").
      const nowMs = yield* Clock.currentTimeMillis
      if (!(yield* (yield* RecentlyValidTokens).has(recognised.success.token.tokenHash, nowMs))) {
        countedForAddress = yield* refuseSpentAddress(call.clientIp)
      }
    }
    authenticated = Option.isSome(countedForAddress) && !countedForAddress.value.state.allowed
      ? Result.fail(new Unauthenticated({ detail: "The token was not looked up: this client address is over its limit." }))
      : Result.isFailure(recognised)
      ? Result.fail(recognised.failure)
      : recognised.success._tag === "Cached"
      ? Result.succeed(recognised.success.credential)
      : yield* Effect.result(verifyStored(recognised.success))
  }
  const requester: Requester = Result.isSuccess(authenticated) ? requesterOf(authenticated.success) : { clientIp: call.clientIp }
  // An address counted above is not counted twice.
  const counted = Option.isSome(countedForAddress) && "clientIp" in requester ? countedForAddress.value : yield* countRequest(requester)
  const verdict = decide(call, counted, authenticated)
  if (counted.state.allowed && verdict.credential !== undefined) yield* Effect.annotateCurrentSpan(admissionAttributes(call, verdict.credential))
  return verdict
}, Effect.withSpan(AdmissionSpan))

/**
 * The rest of the admission once the call is authenticated (or not) and counted: refused over the
 * limit, then without a valid token, then off the allow-list, then by kind of credential, scope and role.
 */
const decide = (call: PublicCall, counted: Counted, authenticated: Result.Result<Credential, Unauthenticated | Unavailable>): Verdict => {
  const credential = Result.getOrUndefined(authenticated)
  const verdict = (outcome: Result.Result<Admitted, Rejection>): Verdict => ({ window: counted.state, decidedAtMs: counted.nowMs, credential, outcome })
  if (!counted.state.allowed) {
    return verdict(Result.fail(rateLimitedError(counted, credential === undefined ? { clientIp: call.clientIp } : requesterOf(credential))))
  }
  if (Result.isFailure(authenticated)) return verdict(Result.fail(authenticated.failure))
  const authenticatedAs = authenticated.success
  const { route } = call
  if (route === undefined) {
    return verdict(Result.fail(new NotFound({ detail: offListDetail(call.method, call.path) })))
  }
  return verdict(
    Result.map(authorize(route, holderOf(authenticatedAs), call, PublicApiPrefix), (route) => ({ route, credential: authenticatedAs, caller: callerOf(authenticatedAs) }))
  )
}

/** What names the caller in spans and logs: a token's displayed prefix, or a partner's client id (no secret). */
export const credentialAttribute = (credential: Credential): readonly [string, string] => {
  switch (credential._tag) {
    case "Pat":
      return ["pat.prefix", credential.pat.tokenPrefix]
    case "Partner":
      return ["partner.client_id", credential.access.clientId]
    case "Scim":
      return ["scim_token.prefix", credential.token.tokenPrefix]
  }
}

/** What the admission's span tells of a call counted and admitted under the limit: who, and the route. */
export const admissionAttributes = (call: PublicCall, credential: Credential): Record<string, string> => {
  const [name, value] = credentialAttribute(credential)
  return { [name]: value, ...(call.route === undefined ? {} : { "http.route": call.route.template }) }
}
