import { Effect, Layer } from "effect"
import { RecentlyValidTokens } from "../../ports/RecentlyValidTokens.js"

/**
 * In process, at most `capacity` hashes, each for `ttlMs` after its last verification; the oldest
 * goes first when full (a Map keeps insertion order, and a verification re-inserts its hash).
 * 100,000 entries of 64-character keys stay under 20 MB.
 */
export const makeRecentlyValidTokensMemory = (ttlMs = 15 * 60_000, capacity = 100_000) => {
  const seenAt = new Map<string, number>()
  const key = (hash: Uint8Array) => Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString("hex")
  return RecentlyValidTokens.of({
    remember: (tokenHash, nowMs) =>
      Effect.sync(() => {
        const k = key(tokenHash)
        seenAt.delete(k)
        seenAt.set(k, nowMs)
        if (seenAt.size > capacity) seenAt.delete(seenAt.keys().next().value!)
      }),
    has: (tokenHash, nowMs) =>
      Effect.sync(() => {
        const k = key(tokenHash)
        const at = seenAt.get(k)
        if (at === undefined) return false
        if (nowMs - at < ttlMs) return true
        seenAt.delete(k)
        return false
      })
  })
}

export const RecentlyValidTokensMemoryLive = Layer.sync(RecentlyValidTokens, () => makeRecentlyValidTokensMemory())
