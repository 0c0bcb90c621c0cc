import { PatCache, type PatCacheShape } from "../../ports/PatCache.js"
import type { PatRecord } from "../../domain/PatRecord.js"
import { Context, Effect, Layer, Option } from "effect"
import { CachedHolders, type CachedHoldersShape } from "../../ports/CachedHolders.js"
import { makeExpiringLru } from "@portfolio/platform/cache"

const keyOf = (tokenHash: Uint8Array) => Buffer.from(tokenHash).toString("base64")

interface PatCacheOptions {
  readonly ttlMs: number
  readonly maxEntries: number
}

/**
 * Verified PATs, each kept `ttlMs` after its verification: a revocation made on another replica
 * therefore takes effect within that time, one made here at once.
 */
const makePatCacheMemory = (options: PatCacheOptions): PatCacheShape & CachedHoldersShape => {
  const entries = makeExpiringLru<PatRecord>(options.maxEntries)
  return {
    get: (tokenHash, nowMs) => Effect.sync(() => Option.fromNullishOr(entries.get(keyOf(tokenHash), nowMs))),
    set: (record, nowMs) => Effect.sync(() => entries.set(keyOf(record.tokenHash), record, nowMs + options.ttlMs)),
    invalidate: (id) => Effect.sync(() => entries.deleteWhere((record) => record.id === id)),
    evict: (holder) => Effect.sync(() => entries.deleteWhere((record) => record.tenantId === holder.tenantId && record.userSub === holder.userSub))
  }
}

/** One cache per process, seen through both ports. */
export const PatCacheMemoryWith = (options: PatCacheOptions) =>
  Layer.effectContext(
    Effect.sync(() => {
      const cache = makePatCacheMemory(options)
      return Context.make(PatCache, cache).pipe(Context.add(CachedHolders, cache))
    })
  )

/** At most a second, so that a revocation elsewhere is felt within it; 10,000 tokens in use at once. */
export const PatCacheMemory = PatCacheMemoryWith({ ttlMs: 1000, maxEntries: 10_000 })
