import { add, type CountedLog } from "../../../domain/rate-limit/CountedLog.js"
import type { WindowState } from "../../../domain/rate-limit/RateLimitWindow.js"
import { type Batch, type BatchResult, locallyAdmitted, type Reservation, usableReservation } from "../../../domain/rate-limit/LocalShare.js"

/** A request admitted against a reservation, counted at the reservation's stamp until a write counts it at its own time. */
interface Uncounted {
  readonly at: number
  readonly stamp: number
}

/** What a batch of one key takes from its share (domain/LocalShare.ts). */
type Claim = Pick<Batch, "release" | "retimed" | "held" | "nowMs" | "reserve">

interface Settings {
  readonly limit: number
  readonly windowMs: number
  readonly replicas: number
  readonly lifetimeMs: number
  readonly groupAfter: number
}

/**
 * What this replica holds of one key's shared window: its reservations in the bucket with the
 * entries still unused, the requests admitted against them and not yet counted at their own time,
 * and the log as its last write left it. Between a batch's claim and its commit, requests keep
 * being admitted against the reservations the batch leaves in place.
 */
export class KeyShare {
  private held: Array<{ stamp: number; count: number }>
  private uncounted: Array<Uncounted> = []
  private inFlight: Array<Uncounted> = []
  /** The unused entries the batch in flight gives back, still this replica's until it is written. */
  private givenBack: Array<Reservation> = []
  private seen: CountedLog
  private lastNowMs: number
  /** Unused entries right after the last write: a write is due once half of them are spent. */
  private topped: number
  /** Set when the key went quiet: the next batch gives everything back and reserves nothing. */
  idle = false
  timer: ReturnType<typeof setTimeout> | undefined

  constructor(readonly limit: number, readonly windowMs: number, private readonly lifetimeMs: number, result: BatchResult, nowMs: number) {
    this.held = result.reserved === undefined ? [] : [{ ...result.reserved }]
    this.seen = result.seen
    this.lastNowMs = nowMs
    this.topped = this.unused
  }

  private get unused(): number {
    return this.held.reduce((sum, reservation) => sum + reservation.count, 0)
  }

  /** A reservation lapsing within this of a request is given back and replaced by the next write. */
  private get renewWithinMs(): number {
    return this.lifetimeMs / 2
  }

  /**
   * Whether a write should start now, after an admission: half the share is spent, or the
   * reservation in use lapses soon. Either way the write lands before the share runs out at the
   * same pace, so a busy key's requests do not fall to the exact path; meanwhile the requests
   * admitted wait, counted at their reservation's stamp, and go together in that write.
   */
  wantsWrite(nowMs: number): boolean {
    const at = usableReservation(this.held, nowMs)
    return at < 0 || this.unused * 2 <= this.topped || this.held[at]!.stamp - nowMs < this.renewWithinMs
  }

  /** Whether requests were admitted since the last write: the key is not quiet. */
  get busy(): boolean {
    return this.uncounted.length > 0
  }

  fits(limit: number, windowMs: number): boolean {
    return limit === this.limit && windowMs === this.windowMs
  }

  /** Admits a request against a reservation, or answers `undefined` when none may take it. */
  admit(nowMs: number): WindowState | undefined {
    const at = usableReservation(this.held, nowMs)
    if (at < 0) return undefined
    const reservation = this.held[at]!
    reservation.count--
    this.uncounted.push({ at: nowMs, stamp: reservation.stamp })
    if (nowMs > this.lastNowMs) this.lastNowMs = nowMs
    const own = [...this.inFlight, ...this.uncounted].map((u) => u.at)
    return locallyAdmitted(this.limit, this.windowMs, nowMs, this.seen, own)
  }

  /**
   * Starts a batch: the requests admitted so far are counted at their own time; reservations
   * lapsed or about to (or all of them, when requests wait for an exact answer or the key went quiet) are given
   * back, and nothing may be admitted against them any more; the others stay in place.
   */
  claim(requests: ReadonlyArray<number>): Claim {
    const nowMs = requests.reduce((latest, at) => Math.max(latest, at), this.lastNowMs)
    this.lastNowMs = nowMs
    const quiet = this.idle
    this.idle = false
    const giveAllBack = requests.length > 0 || quiet
    const release: Array<Reservation> = []
    const kept: Array<{ stamp: number; count: number }> = []
    for (const reservation of this.held) {
      if (reservation.count === 0) continue
      if (giveAllBack || reservation.stamp < nowMs + this.renewWithinMs) release.push({ ...reservation })
      else kept.push(reservation)
    }
    this.held = kept
    this.givenBack = release.map((reservation) => ({ ...reservation }))
    this.inFlight = this.uncounted
    this.uncounted = []
    for (const { stamp } of this.inFlight) release.push({ stamp, count: 1 })
    return {
      release,
      retimed: this.inFlight.map((u) => u.at),
      held: kept.map((reservation) => ({ ...reservation })),
      nowMs,
      reserve: !quiet || requests.length > 0
    }
  }

  commit(result: BatchResult): void {
    this.inFlight = []
    this.givenBack = []
    this.seen = result.seen
    if (result.reserved !== undefined) this.held.push({ ...result.reserved })
    this.topped = this.unused
  }

  /**
   * Undoes the claim of a batch that surely was not written (the key could not be read, or other
   * replicas won every compare-and-set): the bucket still holds what the share held before it, so
   * the entries given back are usable again and the requests counted at their reservation's stamp
   * go in the next write. Forgetting them instead would leave them idle until they left the window.
   */
  abort(): void {
    this.held = [...this.givenBack, ...this.held].sort((a, b) => a.stamp - b.stamp)
    this.uncounted = [...this.inFlight, ...this.uncounted]
    this.inFlight = []
    this.givenBack = []
    this.topped = this.unused
  }

  /**
   * After a batch that may or may not have been written: keeps only what the bucket holds either
   * way, the reservations the batch left in place, and answers the entries given back, which are
   * there only if it was not (HitBatcher.ts resolves that at the key's next read). Its requests are
   * counted either way, at their time or at their reservation's stamp: they are not released again.
   */
  unsure(): ReadonlyArray<Reservation> {
    for (const { at } of this.inFlight) add(this.seen, at, 1)
    const givenBack = this.givenBack
    this.inFlight = []
    this.givenBack = []
    this.topped = this.unused
    return givenBack
  }

  /** Whether it holds nothing: the key may be forgotten, and its next request takes the exact path. */
  get empty(): boolean {
    return this.uncounted.length === 0 && this.inFlight.length === 0 && this.held.every((reservation) => reservation.count === 0)
  }

  /** Whether it holds reservations worth giving back once the key goes quiet. */
  get holding(): boolean {
    return this.held.some((reservation) => reservation.count > 0)
  }
}

/**
 * The batch one key's next read and compare-and-set writes: the requests waiting for an exact
 * answer (times, in arrival order), and what `share` (if this replica holds one) has to write.
 */
export const batchOf = (
  share: KeyShare | undefined,
  requests: ReadonlyArray<number>,
  settings: Settings
): Batch => {
  const claim = share?.claim(requests) ?? {
    release: [],
    retimed: [],
    held: [],
    nowMs: requests.reduce((latest, at) => Math.max(latest, at), Number.NEGATIVE_INFINITY),
    reserve: true
  }
  return { ...settings, requests, ...claim }
}

/** The share of a key once its batch is written: the one held, or a new one when the batch reserved room. */
export const committed = (share: KeyShare | undefined, batch: Batch, result: BatchResult): KeyShare => {
  if (share === undefined) return new KeyShare(batch.limit, batch.windowMs, batch.lifetimeMs, result, batch.nowMs)
  share.commit(result)
  return share
}
