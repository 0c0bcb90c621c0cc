/**
 * The gateway's in-process caches on lru-cache against the Map-based versions they replaced (as
 * of the commit that moved them to adapters/memory), in one process, rounds alternating:
 * `npx tsx services/gateway/test/bench/caches.ts`. Each operation runs through its port inside
 * one Effect, as the admission runs it, so the figures include what the hot path pays around the
 * map. Bounded: a fixed number of operations per round; prints the best round of each.
 */
import { DateTime, Effect, Option } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { RecentlyValidTokensMemory } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemory } from "../../src/adapters/memory/rate-limit/SpentAddressesMemory.js"
import { PatCache, type PatCacheShape } from "../../src/ports/PatCache.js"
import { PatRecord } from "../../src/domain/PatRecord.js"
import { RecentlyValidTokens, type RecentlyValidTokensShape } from "../../src/ports/RecentlyValidTokens.js"
import { SpentAddresses, type SpentAddressesShape } from "../../src/ports/rate-limit/SpentAddresses.js"

const Rounds = 7
const OpsPerRound = 200_000

// The Map-based adapters as they were, reduced to the operations measured.
const mapPatCache = (ttlMs: number, maxEntries: number): Pick<PatCacheShape, "get" | "set"> => {
  const keyOf = (tokenHash: Uint8Array) => Buffer.from(tokenHash).toString("base64")
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
        if (entries.size >= maxEntries) {
          const oldest = entries.keys().next()
          if (!oldest.done) entries.delete(oldest.value)
        }
        entries.set(keyOf(record.tokenHash), { record, until: nowMs + ttlMs })
      })
  }
}

const mapRecentlyValid = (ttlMs: number, capacity: number): RecentlyValidTokensShape => {
  const seenAt = new Map<string, number>()
  const key = (hash: Uint8Array) => Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString("hex")
  return {
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
  }
}

// The old port also passed `now` to markSpent, for the sweep: a constant 0 in this benchmark.
const mapSpentAddresses = (sweepEveryMs: number, nowMs = 0): SpentAddressesShape => {
  const until = new Map<string, number>()
  let lastSweep = Number.NEGATIVE_INFINITY
  const sweep = () => {
    if (nowMs - lastSweep < sweepEveryMs) return
    lastSweep = nowMs
    for (const [ip, untilMs] of until) if (untilMs <= nowMs) until.delete(ip)
  }
  return {
    markSpent: (clientIp, untilMs) =>
      Effect.sync(() => {
        sweep()
        until.set(clientIp, untilMs)
      }),
    isSpent: (clientIp, nowMs) =>
      Effect.sync(() => {
        const untilMs = until.get(clientIp)
        if (untilMs === undefined) return false
        if (untilMs > nowMs) return true
        until.delete(clientIp)
        return false
      })
  }
}

const lru = <S>(tag: Effect.Effect<S, never, never>) => Effect.runSync(tag)

const hashes = (n: number) => Array.from({ length: n }, () => new Uint8Array(randomBytes(32)))
const record = (tokenHash: Uint8Array) =>
  new PatRecord({
    id: randomUUID(),
    tokenHash,
    tokenPrefix: "ap_pat_abc",
    tenantId: randomUUID(),
    userSub: "bench",
    email: "bench@example.com",
    role: "viewer",
    scope: "read",
    createdAt: DateTime.makeUnsafe(0),
    expiresAt: DateTime.makeUnsafe(0),
    revokedAt: null,
    lastUsedAt: null
  })

interface Case {
  readonly name: string
  /** One round of `OpsPerRound` operations on the old or the new adapter. */
  readonly round: (variant: "map" | "lru") => Effect.Effect<unknown>
}

const patCase = (): ReadonlyArray<Case> => {
  const held = hashes(10_000)
  const records = [...held, ...hashes(10_000)].map(record)
  const caches = { map: mapPatCache(1000, 10_000), lru: lru(Effect.provide(PatCache, PatCacheMemory)) }
  for (const cache of Object.values(caches)) Effect.runSync(Effect.forEach(records.slice(0, 10_000), (r) => cache.set(r, 0)))
  return [
    { name: "PatCache.get (hit, 10,000 held)", round: (v) => Effect.gen(function*() { for (let i = 0; i < OpsPerRound; i++) yield* caches[v].get(held[i % held.length]!, 500) }) },
    { name: "PatCache.set (20,000 tokens, 10,000 held)", round: (v) => Effect.gen(function*() { for (let i = 0; i < OpsPerRound; i++) yield* caches[v].set(records[i % records.length]!, 0) }) }
  ]
}

const recentCase = (): ReadonlyArray<Case> => {
  const known = hashes(100_000)
  const more = hashes(100_000)
  const sets = { map: mapRecentlyValid(15 * 60_000, 100_000), lru: lru(Effect.provide(RecentlyValidTokens, RecentlyValidTokensMemory)) }
  for (const set of Object.values(sets)) Effect.runSync(Effect.forEach(known, (h) => set.remember(h, 0)))
  return [
    { name: "RecentlyValidTokens.has (hit, 100,000 held)", round: (v) => Effect.gen(function*() { for (let i = 0; i < OpsPerRound; i++) yield* sets[v].has(known[(i * 7) % known.length]!, 1) }) },
    { name: "RecentlyValidTokens.remember (full, evicting)", round: (v) => Effect.gen(function*() { for (let i = 0; i < OpsPerRound; i++) yield* sets[v].remember(more[i % more.length]!, 1) }) }
  ]
}

const spentCase = (): ReadonlyArray<Case> => {
  const addresses = Array.from({ length: 50_000 }, (_, i) => `198.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)
  const sets = { map: mapSpentAddresses(60_000), lru: lru(Effect.provide(SpentAddresses, SpentAddressesMemory)) }
  for (const set of Object.values(sets)) Effect.runSync(Effect.forEach(addresses, (ip) => set.markSpent(ip, 60_000)))
  return [
    { name: "SpentAddresses.isSpent (hit, 50,000 held)", round: (v) => Effect.gen(function*() { for (let i = 0; i < OpsPerRound; i++) yield* sets[v].isSpent(addresses[(i * 7) % addresses.length]!, 1) }) },
    { name: "SpentAddresses.markSpent (50,000 addresses)", round: (v) => Effect.gen(function*() { for (let i = 0; i < OpsPerRound; i++) yield* sets[v].markSpent(addresses[i % addresses.length]!, 60_000) }) }
  ]
}

const opsPerSecond = (round: Effect.Effect<unknown>) => {
  const started = process.hrtime.bigint()
  Effect.runSync(round)
  return OpsPerRound / (Number(process.hrtime.bigint() - started) / 1e9)
}

const main = () => {
  for (const c of [...patCase(), ...recentCase(), ...spentCase()]) {
    const best = { map: 0, lru: 0 }
    for (let r = 0; r < Rounds; r++) {
      for (const v of r % 2 === 0 ? (["map", "lru"] as const) : (["lru", "map"] as const)) best[v] = Math.max(best[v], opsPerSecond(c.round(v)))
    }
    const fmt = (n: number) => `${(n / 1e6).toFixed(2)} M ops/s`
    process.stdout.write(`${c.name.padEnd(48)} Map ${fmt(best.map)}  lru-cache ${fmt(best.lru)}  lru/Map ${(best.lru / best.map).toFixed(2)}\n`)
  }
}

main()
