import { makeExpiringLru } from "@portfolio/platform/cache"
import { Effect, Layer, Option } from "effect"
import type { ScimTokenRecord } from "../../domain/ScimToken.js"
import { ScimTokenCache } from "../../ports/ScimTokenCache.js"

const keyOf = (tokenHash: Uint8Array) => Buffer.from(tokenHash).toString("base64")

/**
 * Verified SCIM tokens, each kept a second after its verification, as PATs are (PatCacheMemory):
 * a revocation made on another replica takes effect within it, one made here at once; 10,000
 * tokens in use at once (two per tenant at most).
 */
export const ScimTokenCacheMemory = Layer.sync(ScimTokenCache, () => {
  const entries = makeExpiringLru<ScimTokenRecord>(10_000)
  return ScimTokenCache.of({
    get: (tokenHash, nowMs) => Effect.sync(() => Option.fromNullishOr(entries.get(keyOf(tokenHash), nowMs))),
    set: (record, nowMs) => Effect.sync(() => entries.set(keyOf(record.tokenHash), record, nowMs + 1000)),
    invalidate: (id) => Effect.sync(() => entries.deleteWhere((record) => record.id === id))
  })
})
