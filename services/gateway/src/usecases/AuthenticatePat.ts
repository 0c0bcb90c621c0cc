import type { Unauthenticated } from "@portfolio/domain"
import { PatCache } from "../ports/PatCache.js"
import { type PatRecord } from "../domain/PatRecord.js"
import { PatRepository } from "../ports/PatRepository.js"
import { DateTime, Effect, Result } from "effect"
import { parsePat } from "../domain/Pat.js"
import type { WellFormedToken } from "../domain/TokenFormat.js"
import { recogniseToken, type TokenKind, unauthenticated, verifyToken } from "./AuthenticateToken.js"

/**
 * `Bearer <token>` out of the header, refusing every other shape explicitly. A plain function: it
 * runs on every call, before anything needs the runtime.
 */
export const bearerToken = (authorization: string | undefined): Result.Result<string, Unauthenticated> => {
  const value = authorization?.trim() ?? ""
  if (value.length === 0) {
    return Result.fail(unauthenticated("The request has no Authorization header; send 'Authorization: Bearer <personal access token>'."))
  }
  const [scheme = "", ...rest] = value.split(/\s+/)
  if (scheme.toLowerCase() !== "bearer") return Result.fail(unauthenticated("The Authorization header must use the Bearer scheme."))
  if (rest.length === 0) return Result.fail(unauthenticated("The Authorization header has the Bearer scheme but no token."))
  if (rest.length > 1) return Result.fail(unauthenticated("The Authorization header must hold exactly one token after 'Bearer'."))
  return Result.succeed(rest[0]!)
}

/** Why a stored token may no longer be used, if it may not. */
export const refusalOf = (record: PatRecord, nowMs: number): Unauthenticated | undefined => {
  if (record.revokedAt !== null) return unauthenticated("The token has been revoked.")
  if (DateTime.toEpochMillis(record.expiresAt) <= nowMs) return unauthenticated(`The token expired at ${DateTime.formatIso(record.expiresAt)}.`)
  return undefined
}

const PatKind: TokenKind<PatRecord> = {
  parse: parsePat,
  malformed: "The token is not a well-formed personal access token.",
  prefixAttribute: "pat.prefix",
  refusalOf
}

/** A PAT's shape and checksum, and its verification in the cache if it holds one. */
export const recognisePat = Effect.fnUntraced(function*(token: string) {
  return yield* recogniseToken(PatKind, yield* PatCache, token)
})

/** Looks a well-formed PAT up in the store, compares the stored hash in constant time, and caches the verification. */
export const verifyPat = Effect.fnUntraced(function*(pat: WellFormedToken) {
  return yield* verifyToken(PatKind, yield* PatRepository, yield* PatCache, pat)
})
