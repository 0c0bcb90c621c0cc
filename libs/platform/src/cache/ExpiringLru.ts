import { LRUCache } from "lru-cache"

/**
 * A map of at most `max` entries, each valid until a deadline, on lru-cache: when full, the least
 * recently used entry goes. Deadlines are read on the clock the ports are given (Effect's Clock, a
 * TestClock in tests), not with lru-cache's own `ttl`, which reads `performance.now()`, never
 * expires an entry stored at time 0, keeps one exactly at its deadline, and would start a timer
 * per entry with `ttlAutopurge`. An expired entry is dropped when read, or in its turn once the
 * map is full.
 */
export interface ExpiringLru<V> {
  readonly get: (key: string, nowMs: number) => V | undefined
  readonly set: (key: string, value: V, untilMs: number) => void
  /** Drops every entry whose value matches: a scan of the whole map, for rare events (a revocation). */
  readonly deleteWhere: (matches: (value: V) => boolean) => void
}

export const makeExpiringLru = <V extends {}>(max: number): ExpiringLru<V> => {
  const entries = new LRUCache<string, { readonly value: V; readonly untilMs: number }>({ max })
  return {
    get: (key, nowMs) => {
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      if (entry.untilMs > nowMs) return entry.value
      entries.delete(key)
      return undefined
    },
    set: (key, value, untilMs) => void entries.set(key, { value, untilMs }),
    deleteWhere: (matches) => {
      // Collected first: deleting while lru-cache walks its list would skip entries.
      const doomed: Array<string> = []
      for (const [key, entry] of entries.entries()) if (matches(entry.value)) doomed.push(key)
      for (const key of doomed) entries.delete(key)
    }
  }
}
