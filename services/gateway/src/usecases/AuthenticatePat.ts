import { Unauthenticated } from "@portfolio/domain"
import { PatCache } from "../ports/PatCache.js"
import { type PatRecord } from "../domain/PatRecord.js"
import { PatRepository } from "../ports/PatRepository.js"
import { Clock, DateTime, Effect, Either, Option } from "effect"
import { timingSafeEqual } from "node:crypto"
import { parsePat, type WellFormedPat } from "../domain/Pat.js"
import { RecentlyValidTokens } from "../ports/RecentlyValidTokens.js"

const unauthenticated = (detail: string) => new Unauthenticated({ detail })

/**
 * `Bearer <token>` out of the header, refusing every other shape explicitly. A plain function: it
 * runs on every call, before anything needs the runtime.
 */
export const bearerToken = (authorization: string | undefined): Either.Either<string, Unauthenticated> => {
  const value = authorization?.trim() ?? ""
  if (value.length === 0) {
    return Either.left(unauthenticated("The request has no Authorization header; send 'Authorization: Bearer <personal access token>'."))
  }
  const [scheme = "", ...rest] = value.split(/\s+/)
  if (scheme.toLowerCase() !== "bearer") return Either.left(unauthenticated("The Authorization header must use the Bearer scheme."))
  if (rest.length === 0) return Either.left(unauthenticated("The Authorization header has the Bearer scheme but no token."))
  if (rest.length > 1) return Either.left(unauthenticated("The Authorization header must hold exactly one token after 'Bearer'."))
  return Either.right(rest[0]!)
}

const sameHash = (a: Uint8Array, b: Uint8Array) => a.length === b.length && timingSafeEqual(a, b)

/** Last-used timestamps are kept to the minute: no write per request. */
const lastUsedResolutionMs = 60_000

/** Why a stored token may no longer be used, if it may not. */
export const refusalOf = (record: PatRecord, nowMs: number): Unauthenticated | undefined => {
  if (record.revokedAt !== null) return unauthenticated("The token has been revoked.")
  if (DateTime.toEpochMillis(record.expiresAt) <= nowMs) return unauthenticated(`The token expired at ${DateTime.formatIso(record.expiresAt)}.`)
  return undefined
}

const check = (record: PatRecord, nowMs: number): Effect.Effect<PatRecord, Unauthenticated> => {
  const refusal = refusalOf(record, nowMs)
  return refusal === undefined ? Effect.succeed(record) : Effect.fail(refusal)
}

/** A token of the right shape: either verified recently (from the cache), or still to look up. */
export type Recognised =
  | { readonly _tag: "Cached"; readonly record: PatRecord }
  | { readonly _tag: "Unverified"; readonly pat: WellFormedPat }

/**
 * What can be said of a Bearer token without the store: its shape and checksum, and whether the
 * cache holds a recent verification of it (then checked for revocation and expiry).
 */
export const recognisePat = Effect.fnUntraced(function*(token: string) {
  const pat = yield* Option.match(parsePat(token), {
    onNone: () => Effect.fail(unauthenticated("The token is not a well-formed personal access token.")),
    onSome: Effect.succeed
  })
  yield* Effect.annotateCurrentSpan("pat.prefix", pat.tokenPrefix)
  const cache = yield* PatCache
  const nowMs = yield* Clock.currentTimeMillis
  const cached = yield* cache.get(pat.tokenHash, nowMs)
  if (Option.isSome(cached)) return { _tag: "Cached", record: yield* check(cached.value, nowMs) } satisfies Recognised as Recognised
  return { _tag: "Unverified", pat } satisfies Recognised as Recognised
})

/** Looks a well-formed token up in the store, compares the stored hash in constant time, and caches the verification. */
export const verifyPat = Effect.fnUntraced(function*(pat: WellFormedPat) {
  const store = yield* PatRepository
  const cache = yield* PatCache
  const found = yield* store.findByHash(pat.tokenHash)
  if (Option.isNone(found) || !sameHash(found.value.tokenHash, pat.tokenHash)) {
    return yield* unauthenticated("The token is not recognised.")
  }
  const nowMs = yield* Clock.currentTimeMillis
  const record = yield* check(found.value, nowMs)
  yield* cache.set(record, nowMs)
  yield* (yield* RecentlyValidTokens).remember(pat.tokenHash, nowMs)
  if (record.lastUsedAt === null || nowMs - DateTime.toEpochMillis(record.lastUsedAt) >= lastUsedResolutionMs) {
    yield* store.markUsed(record.id, DateTime.unsafeMake(nowMs)).pipe(
      Effect.catchAll((error) => Effect.logWarning("could not record the token's last use", { tokenPrefix: record.tokenPrefix, error: error.detail }))
    )
  }
  return record
})
