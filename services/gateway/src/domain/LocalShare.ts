import { type WindowState, windowStateOf } from "./RateLimitWindow.js"

/*
 * Admitting a request without a round trip to the shared window, exactly (docs/security.md,
 * "Rate limiting across replicas").
 *
 * The first idea was to let a replica admit floor((limit - V) / (2R)) requests alone after seeing
 * the count V, and count them afterwards. Replicas that all see the same V stay under the limit
 * together, but one whose view is refreshed takes a new share while another's earlier share is
 * not yet counted: a replica that keeps going up to the limit through the exact path, while
 * another's count is slow, ends with the limit plus what the others had admitted uncounted, up to
 * limit + (R - 1) × limit / (2R). So the share is reserved in the shared log before it is used:
 *
 * - a replica puts `count` entries stamped `stamp` = now + lifetime into the key's log, in the same
 *   compare-and-set as its other writes, and only where the log has room: the log, reservations
 *   included, never holds more than `limit` entries;
 * - a request at `t` may use one of those entries while `t <= stamp`, with no round trip: it is
 *   already counted, at a time no earlier than its own, so it cannot leave the window too soon;
 * - a later write of that replica takes the used entry out and counts the request at `t` (the same
 *   count, now exact in time), and gives back entries that lapsed unused.
 *
 * Every admitted request is thus an entry of the log from its admission until it leaves the window,
 * and the log never holds more than `limit`: no window admits more than `limit`, whatever the
 * replicas, their number, their timing or their version (older replicas read reservations as
 * requests). The share only bounds how much of the room one replica holds idle: at most half of
 * what it saw free, split among the replicas, so that the others keep room for the exact path.
 */

/** Entries a replica put in a key's shared log ahead of the requests they stand for, all at `stamp`. */
export interface Reservation {
  readonly stamp: number
  readonly count: number
}

/**
 * Entries one replica reserves for a key at most. The share is topped up by every background write
 * (one per round trip while the key is busy), so this many covers far more than a round trip's worth
 * of requests; without it a high limit (RATE_LIMIT_PER_MINUTE of millions) would reserve millions of
 * entries in one write.
 */
export const MaxShare = 64

/** How many requests a replica may hold room for, having seen `seenCount` in the window. */
export const localShare = (limit: number, seenCount: number, replicas: number): number =>
  Math.min(MaxShare, Math.max(0, Math.floor((limit - seenCount) / (2 * Math.max(1, replicas)))))

/** The reservation a request at `nowMs` may use (the first with an entry left whose stamp is not past), or -1. */
export const usableReservation = (held: ReadonlyArray<Reservation>, nowMs: number): number =>
  held.findIndex((reservation) => reservation.count > 0 && nowMs <= reservation.stamp)

/**
 * The answer to a request admitted against a reservation: the log as this replica last wrote it
 * (`seen`, sorted, its own unused reservations left out), slid to now, plus its own requests not yet
 * in it (this one included). Others' reservations count as spent: they may be.
 */
export const locallyAdmitted = (
  limit: number,
  windowMs: number,
  nowMs: number,
  seen: ReadonlyArray<number>,
  uncounted: ReadonlyArray<number>
): WindowState => {
  const cutoff = nowMs - windowMs
  const from = firstAfter(seen, cutoff)
  let size = seen.length - from
  let oldest = from < seen.length ? seen[from]! : Number.POSITIVE_INFINITY
  for (const at of uncounted) {
    if (at <= cutoff) continue
    size++
    if (at < oldest) oldest = at
  }
  return windowStateOf(true, limit, Math.min(limit, size), oldest, windowMs, nowMs)
}

/** What one replica writes to a key's log in one compare-and-set. */
export interface Batch {
  readonly limit: number
  readonly windowMs: number
  readonly replicas: number
  /** This replica's entries to take out: reservations given back, and those of the requests in `retimed`. */
  readonly release: ReadonlyArray<Reservation>
  /** Times of requests admitted against reservations, counted at their own time from now on. */
  readonly retimed: ReadonlyArray<number>
  /** This replica's reservations left in place, which it may still be using. */
  readonly held: ReadonlyArray<Reservation>
  /** Times of the requests waiting for an exact answer, in arrival order. */
  readonly requests: ReadonlyArray<number>
  /** The latest time the batch knows of. */
  readonly nowMs: number
  /** How long after `nowMs` a new reservation may be used. */
  readonly lifetimeMs: number
  /** Whether to reserve room (not when giving back an idle key's). */
  readonly reserve: boolean
}

export interface BatchResult {
  /** The log to write, sorted. */
  readonly times: ReadonlyArray<number>
  /** Whether anything but expiry changed, that is, whether there is anything to write. */
  readonly changed: boolean
  /** The answer to each of `requests`. */
  readonly states: ReadonlyArray<WindowState>
  readonly reserved: Reservation | undefined
  /** The log as this replica sees it: without its reservations, `held` and `reserved`. */
  readonly seen: ReadonlyArray<number>
}

/** The first index of sorted `times` after `cutoff`. */
const firstAfter = (times: ReadonlyArray<number>, cutoff: number): number => {
  let low = 0
  let high = times.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (times[middle]! <= cutoff) low = middle + 1
    else high = middle
  }
  return low
}

/** `times` without up to `count` entries at each reservation's stamp: an entry is a count, any one at a time as good as another. */
const without = (times: Array<number>, entries: ReadonlyArray<Reservation>): Array<number> => {
  const left = new Map<number, number>()
  for (const { count, stamp } of entries) if (count > 0) left.set(stamp, (left.get(stamp) ?? 0) + count)
  if (left.size === 0) return times
  return times.filter((time) => {
    const n = left.get(time)
    if (n === undefined || n === 0) return true
    left.set(time, n - 1)
    return false
  })
}

const insert = (times: Array<number>, time: number, count = 1) => {
  times.splice(firstAfter(times, time), 0, ...Array.from({ length: count }, () => time))
}

const evict = (times: Array<number>, cutoff: number) => {
  times.splice(0, firstAfter(times, cutoff))
}

/**
 * How long an entry is kept past the window. A request is decided later than it was made (it
 * waits for the bucket, up to `RATE_LIMIT_STORE_TIMEOUT`), and replicas' clocks differ a little:
 * a write stamped later must not drop entries that still belong to the window of one decided after it.
 */
const KeptPastWindowMs = 5_000

/** Applies one replica's batch to a key's log (sorted times, counted against `batch.limit`). */
export const applyBatch = (stored: ReadonlyArray<number>, batch: Batch): BatchResult => {
  const { limit, windowMs } = batch
  const times = without([...stored], batch.release)
  let changed = times.length !== stored.length || batch.retimed.length > 0
  for (const at of batch.retimed) insert(times, at)
  const states = batch.requests.map((nowMs) => {
    const from = firstAfter(times, nowMs - windowMs)
    const size = times.length - from
    // A request finds no room in its window, reservations included: refused, exactly as without them.
    const allowed = size < limit
    if (allowed) {
      insert(times, nowMs)
      changed = true
    }
    return windowStateOf(allowed, limit, Math.min(limit, allowed ? size + 1 : size), times[from] ?? nowMs, windowMs, nowMs)
  })
  evict(times, batch.nowMs - windowMs - KeptPastWindowMs)
  const inWindow = times.length - firstAfter(times, batch.nowMs - windowMs)
  const heldCount = batch.held.reduce((sum, reservation) => sum + reservation.count, 0)
  const share = batch.reserve ? localShare(limit, Math.max(0, inWindow - heldCount), batch.replicas) : 0
  const count = Math.max(0, Math.min(share - heldCount, limit - inWindow))
  const seen = without([...times], batch.held)
  const reserved = count > 0 ? { stamp: batch.nowMs + batch.lifetimeMs, count } : undefined
  if (reserved !== undefined) {
    insert(times, reserved.stamp, reserved.count)
    changed = true
  }
  return { times, changed, states, reserved, seen }
}
