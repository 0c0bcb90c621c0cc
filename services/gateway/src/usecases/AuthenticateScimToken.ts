import { Effect } from "effect"
import { parseScimToken, type ScimTokenRecord } from "../domain/ScimToken.js"
import type { WellFormedToken } from "../domain/TokenFormat.js"
import { ScimTokenCache } from "../ports/ScimTokenCache.js"
import { ScimTokenRepository } from "../ports/ScimTokenRepository.js"
import { recogniseToken, type TokenKind, unauthenticated, verifyToken } from "./AuthenticateToken.js"

/** A SCIM token never expires: only its revocation ends it (docs/scim.md). */
const ScimKind: TokenKind<ScimTokenRecord> = {
  parse: parseScimToken,
  malformed: "The token is not a well-formed SCIM token.",
  prefixAttribute: "scim_token.prefix",
  refusalOf: (record) => (record.revokedAt === null ? undefined : unauthenticated("The SCIM token has been revoked."))
}

/** A SCIM token's shape and checksum, and its verification in the cache if it holds one. */
export const recogniseScimToken = Effect.fnUntraced(function*(token: string) {
  return yield* recogniseToken(ScimKind, yield* ScimTokenCache, token)
})

/** Looks a well-formed SCIM token up in the store, compares the stored hash in constant time, and caches the verification. */
export const verifyScimToken = Effect.fnUntraced(function*(token: WellFormedToken) {
  return yield* verifyToken(ScimKind, yield* ScimTokenRepository, yield* ScimTokenCache, token)
})
