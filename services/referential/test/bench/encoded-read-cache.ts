/**
 * The read cache's own cost, in process: `EncodedReadCache` on `lru-cache` against the Map it
 * replaced (kept below as it was), on the request path (get, then count the built body) when every
 * body stays cached, and when every read misses and evicts. Not part of `npm test`.
 *
 *   npx tsx services/referential/test/bench/encoded-read-cache.ts [operations] [rounds]
 */
import { Effect } from "effect"
import { EncodedReadCache, type EncodedReadCacheShape } from "../../src/adapters/http/EncodedReadCache.js"

type Entry = Parameters<EncodedReadCacheShape["set"]>[1]

const report = (line: string) => process.stdout.write(`${line}\n`)
const [operations = 2_000_000, rounds = 7] = process.argv.slice(2).map(Number)

/** The hand-written least-recently-used Map of before, unchanged. */
const mapCache = (budgetBytes: number): EncodedReadCacheShape => {
  const entries = new Map<string, { readonly entry: Entry; bytes: number }>()
  let total = 0
  const drop = (key: string) => {
    total -= entries.get(key)?.bytes ?? 0
    entries.delete(key)
  }
  return {
    lookedUp: () => {},
    get: (key) => {
      const slot = entries.get(key)
      if (slot === undefined) return undefined
      entries.delete(key)
      entries.set(key, slot)
      return slot.entry
    },
    set: (key, entry) => {
      drop(key)
      entries.set(key, { entry, bytes: 0 })
    },
    grew: (key, entry, bytes) => {
      const slot = entries.get(key)
      if (slot === undefined || slot.entry !== entry) return
      slot.bytes += bytes
      total += bytes
      for (const coldest of entries.keys()) {
        if (total <= budgetBytes) break
        drop(coldest)
      }
    },
    evict: (key, entry) => {
      if (entries.get(key)?.entry === entry) drop(key)
    },
    // Not measured here: the application fragments are not on the path this compares.
    fragments: () => undefined,
    keepFragments: () => {}
  }
}

const lruCache = (budgetBytes: number) => Effect.runSync(Effect.provide(EncodedReadCache, EncodedReadCache.fixed(budgetBytes)))

const held = Effect.succeed({ _tag: "Identity" as const, body: new Uint8Array(0) })
const bodyBytes = 1_600_000 // the encoded tree of 5,000 functions
const budget = 64 * 1024 * 1024 // the default REFERENTIAL_READ_CACHE_MB
const keysFor = (count: number) => Array.from({ length: count }, (_, i) => `tenant-${Math.floor(i / 3)}:${["tree", "flat", "posi"][i % 3]}`)

/** What `cachedJson` does with the cache for one request; returns whether it had to build. */
const request = (cache: EncodedReadCacheShape, key: string, revision: number) => {
  let entry = cache.get(key)
  const missed = entry === undefined
  if (entry === undefined) {
    entry = { revision, held, coded: {}, making: undefined }
    cache.set(key, entry)
    // The body is counted once, when its build ends.
    cache.grew(key, entry, bodyBytes)
  }
  return missed
}

/** Operations per second over `operations` requests cycling through `keys`, after one warm pass. */
const run = (make: (budget: number) => EncodedReadCacheShape, keys: ReadonlyArray<string>) => {
  const cache = make(budget)
  for (const key of keys) request(cache, key, 1)
  let misses = 0
  const start = performance.now()
  for (let i = 0; i < operations; i++) if (request(cache, keys[i % keys.length]!, 1)) misses++
  return { opsPerSecond: operations / ((performance.now() - start) / 1000), misses }
}

const median = (values: Array<number>) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!

for (const [scenario, keys] of [
  ["hits (150 bodies, all within the budget)", keysFor(150)],
  ["misses (300 bodies cycled, 160 fit)", keysFor(300)]
] as const) {
  const figures = { map: [] as Array<number>, lru: [] as Array<number> }
  let misses = { map: 0, lru: 0 }
  for (let round = 0; round < rounds; round++) {
    const map = run(mapCache, keys)
    const lru = run(lruCache, keys)
    figures.map.push(map.opsPerSecond)
    figures.lru.push(lru.opsPerSecond)
    misses = { map: map.misses, lru: lru.misses }
  }
  const [map, lru] = [median(figures.map), median(figures.lru)]
  report(`${scenario}, ${operations.toLocaleString("en")} requests, median of ${rounds} rounds:`)
  report(`  Map:       ${(map / 1e6).toFixed(2)} M ops/s (${misses.map.toLocaleString("en")} misses)`)
  report(`  lru-cache: ${(lru / 1e6).toFixed(2)} M ops/s (${misses.lru.toLocaleString("en")} misses)`)
  report(`  lru-cache / Map: ${(lru / map).toFixed(2)}`)
}
