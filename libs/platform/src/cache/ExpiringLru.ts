/**
 * A map of at most `max` entries, each valid until a deadline: when full, the least recently used
 * entry goes. Deadlines are read on the clock the ports are given (Effect's Clock, a TestClock in
 * tests). An expired entry is dropped when read, or in its turn once the map is full.
 *
 * A `Map` in recency order (a read moves its entry to the end) rather than lru-cache: lru-cache
 * allocates its whole capacity up front, which for the gateway's four caches of up to 100,000
 * entries and the assertion verifier's was about 9 MB of every process's heap and 8% of the
 * gateway's start-up CPU, whatever the traffic.
 */
export interface ExpiringLru<V> {
  readonly get: (key: string, nowMs: number) => V | undefined
  readonly set: (key: string, value: V, untilMs: number) => void
  /** Drops every entry whose value matches: a scan of the whole map, for rare events (a revocation). */
  readonly deleteWhere: (matches: (value: V) => boolean) => void
  readonly size: () => number
}

interface Entry<V> {
  readonly value: V
  readonly untilMs: number
}

export const makeExpiringLru = <V extends {}>(max: number): ExpiringLru<V> => {
  const entries = new Map<string, Entry<V>>()
  return {
    get: (key, nowMs) => {
      const entry = entries.get(key)
      if (entry === undefined) return undefined
      entries.delete(key)
      if (entry.untilMs <= nowMs) return undefined
      entries.set(key, entry)
      return entry.value
    },
    set: (key, value, untilMs) => {
      entries.delete(key)
      entries.set(key, { value, untilMs })
      // A Map iterates in insertion order: its first key is the least recently used.
      if (entries.size > max) entries.delete(entries.keys().next().value!)
    },
    deleteWhere: (matches) => {
      // Deleting the entry just visited is safe while a Map is iterated.
      for (const [key, entry] of entries) if (matches(entry.value)) entries.delete(key)
    },
    size: () => entries.size
  }
}
