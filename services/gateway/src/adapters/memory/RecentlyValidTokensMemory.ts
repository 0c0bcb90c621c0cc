import { Effect, Layer } from "effect"
import { RecentlyValidTokens } from "../../ports/RecentlyValidTokens.js"
import { makeExpiringLru } from "@portfolio/platform/cache"

const key = (hash: Uint8Array) => Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString("hex")

/**
 * In process, at most `capacity` hashes, each for `ttlMs` after its last verification; the least
 * recently used goes first when full. 100,000 entries of 64-character keys stay under 20 MB.
 */
const makeRecentlyValidTokensMemory = (ttlMs: number, capacity: number) => {
  const seen = makeExpiringLru<true>(capacity)
  return RecentlyValidTokens.of({
    remember: (tokenHash, nowMs) => Effect.sync(() => seen.set(key(tokenHash), true, nowMs + ttlMs)),
    has: (tokenHash, nowMs) => Effect.sync(() => seen.get(key(tokenHash), nowMs) !== undefined)
  })
}

export const RecentlyValidTokensMemory = Layer.sync(RecentlyValidTokens, () => makeRecentlyValidTokensMemory(15 * 60_000, 100_000))
