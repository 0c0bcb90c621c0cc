import { PatCache, type PatCacheShape } from "../../ports/PatCache.js"
import type { PatRecord } from "../../ports/PatStore.js"
import { Context, Effect, Layer, Option } from "effect"
import { CachedHolders, type CachedHoldersShape } from "../../ports/CachedHolders.js"

const keyOf = (tokenHash: Uint8Array) => Buffer.from(tokenHash).toString("base64")

/**
 * A bounded map of verified PATs with a time-to-live of at most one second: a revocation made on
 * another replica therefore takes effect within a second, one made here at once.
 */
export const makePatCacheMemory = (options: { readonly ttlMs: number; readonly maxEntries: number }): PatCacheShape & CachedHoldersShape => {
  const entries = new Map<string, { readonly record: PatRecord; readonly until: number }>()
  return {
    get: (tokenHash, nowMs) =>
      Effect.sync(() => {
        const key = keyOf(tokenHash)
        const entry = entries.get(key)
        if (entry === undefined) return Option.none()
        if (entry.until <= nowMs) {
          entries.delete(key)
          return Option.none()
        }
        return Option.some(entry.record)
      }),
    set: (record, nowMs) =>
      Effect.sync(() => {
        if (entries.size >= options.maxEntries) {
          const oldest = entries.keys().next()
          if (!oldest.done) entries.delete(oldest.value)
        }
        entries.set(keyOf(record.tokenHash), { record, until: nowMs + options.ttlMs })
      }),
    invalidate: (id) =>
      Effect.sync(() => {
        for (const [key, entry] of entries) if (entry.record.id === id) entries.delete(key)
      }),
    evict: (holder) =>
      Effect.sync(() => {
        for (const [key, { record }] of entries) {
          if (record.tenantId === holder.tenantId && record.userSub === holder.userSub) entries.delete(key)
        }
      })
  }
}

export const PatCacheTtlMs = 1000

/** One cache per process, seen through both ports. */
export const patCacheMemoryLayer = (options: { readonly ttlMs: number; readonly maxEntries: number }) =>
  Layer.effectContext(
    Effect.sync(() => {
      const cache = makePatCacheMemory(options)
      return Context.make(PatCache, cache).pipe(Context.add(CachedHolders, cache))
    })
  )

export const PatCacheMemoryLive = patCacheMemoryLayer({ ttlMs: PatCacheTtlMs, maxEntries: 10_000 })
