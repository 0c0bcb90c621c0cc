import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { batchOf, committed, type KeyShare } from "../../src/adapters/nats/rate-limit/KeyShare.js"
import { after, type CountedLog, expand, logOf } from "../../src/domain/rate-limit/CountedLog.js"
import { applyBatch as applyToLog, type Batch, localShare, locallyAdmitted, MaxShare, usableReservation } from "../../src/domain/rate-limit/LocalShare.js"
import { mostInAnyWindow, W } from "../support/Windows.js"

const T0 = 1_763_779_200_000
const settings = { limit: 180, windowMs: W, replicas: 2, lifetimeMs: 2_000, groupAfter: Number.POSITIVE_INFINITY }
/** applyBatch on logs of one entry per time, as the stored log of the default limits always is. */
const applyBatch = (times: ReadonlyArray<number>, batch: Batch) => {
  const result = applyToLog(logOf(times), batch)
  return { ...result, times: expand(result.log), seen: expand(result.seen) }
}
const fresh = (requests: Array<number>): Batch => batchOf(undefined, requests, settings)

describe("localShare: the room a replica may hold for requests it admits with no round trip", () => {
  it("is half the room seen free, split among the replicas, and nothing near the limit", () => {
    expect(localShare(180, 0, 2)).toBe(45)
    expect(localShare(180, 1, 3)).toBe(29)
    expect(localShare(180, 1, 1)).toBe(89)
    expect(localShare(100_000_000, 0, 1)).toBe(MaxShare)
    expect(localShare(100, 1, 1)).toBe(49)
    expect(localShare(180, 175, 2)).toBe(1)
    expect(localShare(180, 177, 2)).toBe(0)
    expect(localShare(180, 180, 1)).toBe(0)
    expect(localShare(180, 200, 1)).toBe(0)
    expect(localShare(9, 1, 0)).toBe(4)
    // However high the limit, one write reserves a bounded number of entries.
    expect(localShare(Number.MAX_SAFE_INTEGER, 0, 1)).toBe(MaxShare)
  })

  it("is used oldest first, only until its stamp", () => {
    const held = [{ stamp: 1_000, count: 0 }, { stamp: 2_000, count: 1 }, { stamp: 3_000, count: 5 }]
    expect(usableReservation(held, 1_500)).toBe(1)
    expect(usableReservation(held, 2_000)).toBe(1)
    expect(usableReservation(held, 2_001)).toBe(2)
    expect(usableReservation(held, 3_001)).toBe(-1)
  })

  it("answers a local admission from the log last seen, slid to now, and this replica's own requests", () => {
    const seen = [T0, T0 + 10, T0 + 20]
    expect(locallyAdmitted(180, W, T0 + 30, logOf(seen), [T0 + 25, T0 + 30])).toEqual({ allowed: true, limit: 180, remaining: 175, resetAtMs: T0 + W })
    // The two oldest have left the window.
    expect(locallyAdmitted(180, W, T0 + W + 10, logOf(seen), [T0 + W + 10])).toEqual({ allowed: true, limit: 180, remaining: 178, resetAtMs: T0 + 20 + W })
  })
})

describe("applyBatch: one replica's compare-and-set on a key's log", () => {
  it("counts the first request exactly and reserves the share, stamped after its lifetime, outside what it sees", () => {
    const result = applyBatch([], fresh([T0]))
    expect(result.states).toEqual([{ allowed: true, limit: 180, remaining: 179, resetAtMs: T0 + W }])
    expect(result.reserved).toEqual({ stamp: T0 + 2_000, count: 44 })
    expect(result.seen).toEqual([T0])
    expect(result.times).toEqual([T0, ...Array.from({ length: 44 }, () => T0 + 2_000)])
    expect(result.changed).toBe(true)
  })

  it("counts the requests admitted against a reservation at their own time, gives back what lapsed and tops the share up", () => {
    const stored = [T0, T0 + 1, T0 + 900, T0 + 900, T0 + 900, T0 + 1_500, T0 + 2_000, T0 + 2_000]
    const result = applyBatch(stored, {
      ...settings,
      release: [{ stamp: T0 + 900, count: 1 }, { stamp: T0 + 2_000, count: 1 }, { stamp: T0 + 2_000, count: 1 }],
      retimed: [T0 + 1_100, T0 + 1_200],
      held: [],
      requests: [],
      nowMs: T0 + 1_200,
      reserve: true,
      groupAfter: Number.POSITIVE_INFINITY
    })
    // T0 + 900 was a reservation of the other replica's: it stays, seen as spent.
    expect(result.seen).toEqual([T0, T0 + 1, T0 + 900, T0 + 900, T0 + 1_100, T0 + 1_200, T0 + 1_500])
    expect(result.reserved).toEqual({ stamp: T0 + 3_200, count: localShare(180, 7, 2) })
  })

  it("never reserves past the room, leaves what it holds in place, and writes nothing for refusals alone", () => {
    const full = Array.from({ length: 180 }, (_, i) => T0 + i)
    const refused = applyBatch(full, fresh([T0 + 500]))
    expect(refused).toMatchObject({ changed: false, reserved: undefined, states: [{ allowed: false, remaining: 0, resetAtMs: T0 + W }] })
    const held = [{ stamp: T0 + 2_000, count: 40 }]
    const stored = [...Array.from({ length: 100 }, (_, i) => T0 + i), ...Array.from({ length: 40 }, () => T0 + 2_000)]
    const kept = applyBatch(stored, { ...settings, release: [], retimed: [], held, requests: [], nowMs: T0 + 200, reserve: true, groupAfter: Number.POSITIVE_INFINITY })
    // Seen: 100, so the share is 20, already held twice over.
    expect(kept).toMatchObject({ changed: false, reserved: undefined })
    expect(kept.seen).toHaveLength(100)
  })

  it("keeps entries past the window for a request decided after a write stamped later", () => {
    const three = { ...settings, limit: 3, replicas: 2 }
    const full = [T0, T0 + 1, T0 + 2]
    // Another replica writes at T0 + W + 100, when those three have left the window...
    const later = applyBatch(full, batchOf(undefined, [T0 + W + 100], three))
    expect(later.states[0]).toMatchObject({ allowed: true, remaining: 2 })
    // ...and a request made at T0 + W - 1, still waiting for the bucket then, finds its window full.
    expect(applyBatch(later.times, batchOf(undefined, [T0 + W - 1], three)).states[0]).toMatchObject({ allowed: false, remaining: 0 })
  })

  it("refuses a request when others' reservations fill the log, since they may be spent", () => {
    const stored = [...Array.from({ length: 100 }, (_, i) => T0 + i), ...Array.from({ length: 80 }, () => T0 + 2_000)]
    expect(applyBatch(stored, fresh([T0 + 500])).states).toEqual([{ allowed: false, limit: 180, remaining: 0, resetAtMs: T0 + W }])
  })
})

type Step =
  | { readonly kind: "request"; readonly replica: number; readonly gapMs: number }
  | { readonly kind: "write"; readonly replica: number; readonly outcome: "written" | "lost" | "written, unknown to the replica" }
  | { readonly kind: "quiet"; readonly replica: number }

// Mostly bursts of requests and writes, some pauses, now and then a window's worth of quiet.
const step = (replicas: number): fc.Arbitrary<Step> =>
  fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({
        kind: fc.constant("request" as const),
        replica: fc.nat(replicas - 1),
        gapMs: fc.oneof({ weight: 8, arbitrary: fc.nat(50) }, { weight: 3, arbitrary: fc.nat(3_000) }, { weight: 1, arbitrary: fc.nat(70_000) })
      })
    },
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("write" as const),
        replica: fc.nat(replicas - 1),
        outcome: fc.oneof({ weight: 6, arbitrary: fc.constant("written" as const) }, fc.constant("lost" as const), fc.constant("written, unknown to the replica" as const))
      })
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("quiet" as const), replica: fc.nat(replicas - 1) }) }
  )

interface Replica {
  share: KeyShare | undefined
  waiting: Array<number>
  settle: boolean
  inFlight: { readonly batch: Batch; readonly share: KeyShare | undefined } | undefined
}

/** How long a request waits for the bucket before it is counted alone (RATE_LIMIT_STORE_TIMEOUT). */
const TimeoutMs = 300

/**
 * Replicas as HitBatcher drives them, each batch read when it starts and written at once when its
 * step comes (as a compare-and-set retried on conflict does), requests admitted locally in between.
 * A request that waits past the timeout is answered alone, in degraded mode: not an exact admission.
 */
const simulate = (limit: number, replicaCount: number, steps: ReadonlyArray<Step>, timeoutMs = TimeoutMs, groupAfter = Number.POSITIVE_INFINITY) => {
  let log: CountedLog = logOf([])
  let now = T0
  const admitted: Array<number> = []
  const replicas: Array<Replica> = Array.from({ length: replicaCount }, () => ({ share: undefined, waiting: [], settle: false, inFlight: undefined }))
  const options = { limit, windowMs: W, replicas: replicaCount, lifetimeMs: 2_000, groupAfter }
  const start = (r: Replica) => {
    if (r.inFlight !== undefined || (r.waiting.length === 0 && !r.settle)) return
    const batch = batchOf(r.share, r.waiting, options)
    r.waiting = []
    r.settle = false
    if (batch.requests.length > 0 || batch.release.length > 0 || batch.retimed.length > 0) r.inFlight = { batch, share: r.share }
    else if (r.share?.empty === true) r.share = undefined
  }
  for (const s of steps) {
    const r = replicas[s.replica]!
    if (s.kind === "request") {
      now += s.gapMs
      for (const other of replicas) other.waiting = other.waiting.filter((at) => now - at <= timeoutMs)
      if (r.share?.admit(now) !== undefined) {
        admitted.push(now)
        if (r.share.wantsWrite(now)) r.settle = true
      } else r.waiting.push(now)
    } else if (s.kind === "quiet") {
      if (r.share !== undefined) {
        r.share.idle = true
        r.settle = true
      }
    } else if (r.inFlight !== undefined) {
      const { batch, share } = r.inFlight
      r.inFlight = undefined
      const result = applyToLog(log, batch)
      if (s.outcome !== "lost") log = result.log
      if (s.outcome === "written") {
        result.states.forEach((state, i) => state.allowed && now - batch.requests[i]! <= timeoutMs && admitted.push(batch.requests[i]!))
        r.share = committed(share, batch, result)
        if (r.share.empty) r.share = undefined
      } else r.share = undefined // failed: the replica forgets its share; the waiting requests were counted alone
    }
    start(r)
  }
  return { admitted: admitted.sort((x, y) => x - y), log, now, replicas }
}

describe("replicas admitting against their shares", () => {
  it("never admit more than the limit in any window, whatever the interleaving, lost writes and writes of unknown outcome", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 4 }).chain((n) => fc.tuple(fc.constant(n), fc.array(step(n), { minLength: 100, maxLength: 400 }))), (limit, [n, steps]) => {
        const { admitted } = simulate(limit, n, steps)
        expect(mostInAnyWindow(admitted)).toBeLessThanOrEqual(limit)
      }),
      { numRuns: 500 }
    )
  })

  it("never admit more than the limit either once the log groups its older entries, since an entry only moves later", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 4 }).chain((n) => fc.tuple(fc.constant(n), fc.array(step(n), { minLength: 100, maxLength: 400 }))),
        (limit, groupAfter, [n, steps]) => {
          const { admitted, log, now } = simulate(limit, n, steps, TimeoutMs, groupAfter)
          expect(mostInAnyWindow(admitted)).toBeLessThanOrEqual(limit)
          expect(log.times.length).toBeLessThanOrEqual(groupAfter + 2 + Math.ceil((W + 7_000) / 1_000))
          // Every request admitted still in the window is still counted.
          expect(after(log, now - W).size).toBeGreaterThanOrEqual(admitted.filter((t) => t > now - W).length)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("leave in the log exactly the requests admitted, once their writes succeed and quiet keys give their room back", () => {
    const written = step(3).filter((s) => s.kind !== "write" || s.outcome === "written")
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(written, { minLength: 50, maxLength: 300 }), (limit, steps) => {
        // Then every replica goes quiet and writes what it has left, a few times over.
        const drain = Array.from({ length: 4 }, () => [0, 1, 2].flatMap((replica): Array<Step> => [{ kind: "quiet", replica }, { kind: "write", replica, outcome: "written" }])).flat()
        const { admitted, log, now, replicas } = simulate(limit, 3, [...steps, ...drain], Number.POSITIVE_INFINITY)
        expect(replicas.every((r) => r.share === undefined && r.inFlight === undefined)).toBe(true)
        const inWindow = (times: ReadonlyArray<number>) => times.filter((t) => t > now - W)
        expect(inWindow(expand(log))).toEqual(inWindow(admitted))
      })
    )
  })
})
