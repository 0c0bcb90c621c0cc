/**
 * A key's log as counts at times: `counts[i]` entries at `times[i]`, times strictly increasing.
 * An entry's time is never earlier than the request (or reservation) it stands for, and may be
 * later (docs/security.md, "Rate limiting across replicas"): everything that counts entries after
 * a cutoff then counts at least the requests made after it, so a decision can only be stricter.
 */
export interface CountedLog {
  readonly times: Array<number>
  readonly counts: Array<number>
}

export const emptyLog = (): CountedLog => ({ times: [], counts: [] })

/** The log of sorted `times`, one entry each. */
export const logOf = (times: ReadonlyArray<number>): CountedLog => {
  const log = emptyLog()
  for (const time of times) add(log, time, 1)
  return log
}

export const copyLog = (log: CountedLog): CountedLog => ({ times: [...log.times], counts: [...log.counts] })

/** Every entry's time, sorted: what the log stood for before entries were counted together. */
export const expand = (log: CountedLog): Array<number> => {
  const out: Array<number> = []
  log.times.forEach((time, i) => {
    for (let n = 0; n < log.counts[i]!; n++) out.push(time)
  })
  return out
}

/** The first index whose time is after `cutoff`. */
export const firstAfter = (times: ReadonlyArray<number>, cutoff: number): number => {
  let low = 0
  let high = times.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (times[middle]! <= cutoff) low = middle + 1
    else high = middle
  }
  return low
}

export const total = (log: CountedLog): number => log.counts.reduce((sum, n) => sum + n, 0)

/**
 * Entries after `cutoff`, and the time of the oldest of them (+Infinity when none), from the log's
 * `entries` in all: the cutoff is a window back, so only the few entries kept past it are summed.
 */
export const after = (log: CountedLog, cutoff: number, entries = total(log)): { readonly size: number; readonly oldest: number } => {
  const from = firstAfter(log.times, cutoff)
  let size = entries
  for (let i = 0; i < from; i++) size -= log.counts[i]!
  return { size, oldest: from < log.times.length ? log.times[from]! : Number.POSITIVE_INFINITY }
}

export const add = (log: CountedLog, time: number, count: number): void => {
  if (count <= 0) return
  const at = firstAfter(log.times, time)
  if (at > 0 && log.times[at - 1] === time) log.counts[at - 1]! += count
  else {
    log.times.splice(at, 0, time)
    log.counts.splice(at, 0, count)
  }
}

/**
 * Takes out up to `count` entries at exactly `time`; answers how many. Taking out an entry at
 * `time` that stood for another request is as good as taking out the one meant: that one's entry
 * is at `time` or later, and the other request can be counted there instead.
 */
export const remove = (log: CountedLog, time: number, count: number): number => {
  const at = firstAfter(log.times, time) - 1
  if (at < 0 || log.times[at] !== time) return 0
  const taken = Math.min(count, log.counts[at]!)
  log.counts[at]! -= taken
  if (log.counts[at] === 0) {
    log.times.splice(at, 1)
    log.counts.splice(at, 1)
  }
  return taken
}

/** Drops the entries at or before `cutoff`. */
export const evict = (log: CountedLog, cutoff: number): void => {
  const from = firstAfter(log.times, cutoff)
  log.times.splice(0, from)
  log.counts.splice(0, from)
}

/** Newest entries kept at their own time; what the default limits ever hold, so their logs are never grouped. */
export const ExactEntries = 512

/** Width of the time slots older entries are grouped in: the most an entry is moved later. */
export const SlotMs = 1_000

/**
 * Bounds the log whatever the limit and the rate: past the newest `ExactEntries` entries, the
 * entries of each `SlotMs` slot of epoch time become one count at the latest of their times. An
 * entry thus only ever moves later, and never out of its slot (a group's time stays in its slot
 * when grouped again), so it leaves every window at most `SlotMs` after it would have. What is
 * left is at most `ExactEntries` times, plus one per slot of the span the log keeps.
 */
export const compact = (log: CountedLog, exactEntries = ExactEntries): void => {
  let kept = 0
  let boundary = log.times.length
  while (boundary > 0 && kept + log.counts[boundary - 1]! <= exactEntries) kept += log.counts[--boundary]!
  if (boundary <= 1) return
  const times: Array<number> = []
  const counts: Array<number> = []
  for (let i = 0; i < boundary; i++) {
    const last = times.length - 1
    if (last >= 0 && Math.floor(times[last]! / SlotMs) === Math.floor(log.times[i]! / SlotMs)) {
      times[last] = log.times[i]!
      counts[last]! += log.counts[i]!
    } else {
      times.push(log.times[i]!)
      counts.push(log.counts[i]!)
    }
  }
  log.times.splice(0, boundary, ...times)
  log.counts.splice(0, boundary, ...counts)
}
