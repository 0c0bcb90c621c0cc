import { add, after, compact, copyLog, type CountedLog, evict, remove, total } from "./CountedLog.js"
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
 * Entries one replica reserves for a key at most. The share is topped up once half of it is spent;
 * under load a write takes 5-20 ms here, so 256 leaves 128 requests of room meanwhile (64 ran out at
 * 2,000 requests a second on one key, sending requests to the exact path). Without a bound a high
 * limit (RATE_LIMIT_PER_MINUTE of millions) would reserve millions of entries in one write. The
 * default limits never reach it: their share is floor((limit - V) / (2R)).
 */
export const MaxShare = 256

/** How many requests a replica may hold room for, having seen `seenCount` in the window. */
export const localShare = (limit: number, seenCount: number, replicas: number): number =>
  Math.min(MaxShare, Math.max(0, Math.floor((limit - seenCount) / (2 * Math.max(1, replicas)))))

/** The reservation a request at `nowMs` may use (the first with an entry left whose stamp is not past), or -1. */
export const usableReservation = (held: ReadonlyArray<Reservation>, nowMs: number): number =>
  held.findIndex((reservation) => reservation.count > 0 && nowMs <= reservation.stamp)

/**
 * The answer to a request admitted against a reservation: the log as this replica last wrote it
 * (`seen`, its own unused reservations left out), slid to now, plus its own requests not yet in it
 * (this one included). Others' reservations count as spent: they may be.
 */
export const locallyAdmitted = (
  limit: number,
  windowMs: number,
  nowMs: number,
  seen: CountedLog,
  uncounted: ReadonlyArray<number>
): WindowState => {
  const cutoff = nowMs - windowMs
  let { oldest, size } = after(seen, cutoff)
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
  /** Entries the log keeps at their own time before it groups older ones (CountedLog.ts `compact`); Infinity for never. */
  readonly groupAfter: number
}

export interface BatchResult {
  /** The log to write. */
  readonly log: CountedLog
  /** Whether anything but expiry changed, that is, whether there is anything to write. */
  readonly changed: boolean
  /** The answer to each of `requests`. */
  readonly states: ReadonlyArray<WindowState>
  readonly reserved: Reservation | undefined
  /** The log as this replica sees it: without its reservations, `held` and `reserved`. */
  readonly seen: CountedLog
}

/**
 * How long an entry is kept past the window. A request is decided later than it was made (it
 * waits for the bucket, up to `RATE_LIMIT_STORE_TIMEOUT`), and replicas' clocks differ a little:
 * a write stamped later must not drop entries that still belong to the window of one decided after it.
 */
const KeptPastWindowMs = 5_000

/** Applies one replica's batch to a key's log (counted against `batch.limit`); `stored` is left as it is. */
export const applyBatch = (stored: CountedLog, batch: Batch): BatchResult => {
  const { limit, windowMs } = batch
  const log = copyLog(stored)
  let entries = total(log)
  let changed = batch.retimed.length > 0
  for (const { count, stamp } of batch.release) {
    const removed = remove(log, stamp, count)
    entries -= removed
    if (removed > 0) changed = true
  }
  for (const at of batch.retimed) add(log, at, 1)
  entries += batch.retimed.length
  const states = batch.requests.map((nowMs) => {
    const { oldest, size } = after(log, nowMs - windowMs, entries)
    // A request finds no room in its window, reservations included: refused, exactly as without them.
    const allowed = size < limit
    if (allowed) {
      add(log, nowMs, 1)
      entries++
      changed = true
    }
    return windowStateOf(allowed, limit, Math.min(limit, allowed ? size + 1 : size), allowed || oldest === Number.POSITIVE_INFINITY ? Math.min(oldest, nowMs) : oldest, windowMs, nowMs)
  })
  evict(log, batch.nowMs - windowMs - KeptPastWindowMs)
  const inWindow = after(log, batch.nowMs - windowMs).size
  const heldCount = batch.held.reduce((sum, reservation) => sum + reservation.count, 0)
  const share = batch.reserve ? localShare(limit, Math.max(0, inWindow - heldCount), batch.replicas) : 0
  const count = Math.max(0, Math.min(share - heldCount, limit - inWindow))
  const reserved = count > 0 ? { stamp: batch.nowMs + batch.lifetimeMs, count } : undefined
  if (reserved !== undefined) {
    add(log, reserved.stamp, reserved.count)
    changed = true
  }
  if (Number.isFinite(batch.groupAfter)) compact(log, batch.groupAfter)
  const seen = copyLog(log)
  for (const { count: n, stamp } of [...batch.held, ...(reserved === undefined ? [] : [reserved])]) remove(seen, stamp, n)
  return { log, changed, states, reserved, seen }
}
