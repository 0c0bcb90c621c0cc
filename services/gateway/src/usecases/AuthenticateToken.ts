import { Unauthenticated, type Unavailable } from "@portfolio/domain"
import { Clock, DateTime, Effect, Option } from "effect"
import { timingSafeEqual } from "node:crypto"
import type { WellFormedToken } from "../domain/TokenFormat.js"
import { RecentlyValidTokens } from "../ports/RecentlyValidTokens.js"

/**
 * The authentication every stored token kind shares (PATs, SCIM tokens): recognised by shape and
 * checksum, then from the cache or the store by its hash, checked, cached, its use marked. Each
 * kind says how it is parsed and refused, and where it is kept.
 */

/** What the authentication reads of a stored token, whatever its kind. */
export interface StoredToken {
  readonly id: string
  readonly tokenHash: Uint8Array
  readonly tokenPrefix: string
  readonly lastUsedAt: DateTime.Utc | null
}

export interface TokenKind<T extends StoredToken> {
  readonly parse: (candidate: string) => Option.Option<WellFormedToken>
  /** The 401's detail for a token of the kind's prefix but not of its shape or checksum. */
  readonly malformed: string
  /** The span attribute naming the token's displayed prefix. */
  readonly prefixAttribute: string
  /** Why a stored token may no longer be used, if it may not. */
  readonly refusalOf: (record: T, nowMs: number) => Unauthenticated | undefined
}

export interface TokenStore<T> {
  readonly findByHash: (tokenHash: Uint8Array) => Effect.Effect<Option.Option<T>, Unavailable>
  readonly markUsed: (id: string, at: DateTime.Utc) => Effect.Effect<void, Unavailable>
}

export interface TokenCache<T> {
  readonly get: (tokenHash: Uint8Array, nowMs: number) => Effect.Effect<Option.Option<T>>
  readonly set: (record: T, nowMs: number) => Effect.Effect<void>
}

/** A token of the right shape: either verified recently (from the cache), or still to look up. */
export type Recognised<T> =
  | { readonly _tag: "Cached"; readonly record: T }
  | { readonly _tag: "Unverified"; readonly token: WellFormedToken }

export const unauthenticated = (detail: string) => new Unauthenticated({ detail })

const sameHash = (a: Uint8Array, b: Uint8Array) => a.length === b.length && timingSafeEqual(a, b)

/** Last-used timestamps are kept to the minute: no write per request. */
const lastUsedResolutionMs = 60_000

const check = <T extends StoredToken>(kind: TokenKind<T>, record: T, nowMs: number): Effect.Effect<T, Unauthenticated> => {
  const refusal = kind.refusalOf(record, nowMs)
  return refusal === undefined ? Effect.succeed(record) : Effect.fail(refusal)
}

/**
 * What can be said of a Bearer token without the store: its shape and checksum, and whether the
 * cache holds a recent verification of it (then checked again, for revocation and expiry).
 */
export const recogniseToken = <T extends StoredToken>(kind: TokenKind<T>, cache: TokenCache<T>, candidate: string) =>
  Effect.gen(function*() {
    const token = yield* Option.match(kind.parse(candidate), {
      onNone: () => Effect.fail(unauthenticated(kind.malformed)),
      onSome: Effect.succeed
    })
    yield* Effect.annotateCurrentSpan(kind.prefixAttribute, token.tokenPrefix)
    const nowMs = yield* Clock.currentTimeMillis
    const cached = yield* cache.get(token.tokenHash, nowMs)
    if (Option.isSome(cached)) return { _tag: "Cached", record: yield* check(kind, cached.value, nowMs) } satisfies Recognised<T> as Recognised<T>
    return { _tag: "Unverified", token } satisfies Recognised<T> as Recognised<T>
  })

/** Looks a well-formed token up in the store, compares the stored hash in constant time, and caches the verification. */
export const verifyToken = <T extends StoredToken>(kind: TokenKind<T>, store: TokenStore<T>, cache: TokenCache<T>, token: WellFormedToken) =>
  Effect.gen(function*() {
    const found = yield* store.findByHash(token.tokenHash)
    if (Option.isNone(found) || !sameHash(found.value.tokenHash, token.tokenHash)) {
      return yield* unauthenticated("The token is not recognised.")
    }
    const nowMs = yield* Clock.currentTimeMillis
    const record = yield* check(kind, found.value, nowMs)
    yield* cache.set(record, nowMs)
    yield* (yield* RecentlyValidTokens).remember(token.tokenHash, nowMs)
    if (record.lastUsedAt === null || nowMs - DateTime.toEpochMillis(record.lastUsedAt) >= lastUsedResolutionMs) {
      yield* store.markUsed(record.id, DateTime.makeUnsafe(nowMs)).pipe(
        Effect.catch((error) => Effect.logWarning("could not record the token's last use", { tokenPrefix: record.tokenPrefix, error: error.detail }))
      )
    }
    return record
  })
