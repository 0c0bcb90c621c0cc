import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { type Scope, Scopes, TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { ForgetAfter, ReadFreshness, TrustFor, WatchEvery } from "../../src/usecases/ReadFreshness.js"
import { writing } from "../../src/usecases/Writing.js"
import { tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

/**
 * Counts the revision reads and the watches (with the tenants the last one asked for), and can
 * hold the next single read until released.
 */
const probe = {
  reads: 0,
  watches: 0,
  lastWatched: [] as ReadonlyArray<string>,
  hold: undefined as Deferred.Deferred<void> | undefined
}
const Probed = Layer.effect(
  TenantRevisions,
  Effect.map(TenantRevisions, (inner) => {
    // Each test's own: a hold a failed test left must not stall the next.
    probe.hold = undefined
    probe.lastWatched = []
    return {
      ...inner,
      current: (tenantId: string) =>
        Effect.suspend(() => {
          probe.reads += 1
          const hold = probe.hold
          probe.hold = undefined
          return hold === undefined ? inner.current(tenantId) : Effect.tap(inner.current(tenantId), () => Deferred.await(hold))
        }),
      currentOf: (tenantIds: ReadonlyArray<string>) =>
        Effect.suspend(() => {
          probe.watches += 1
          probe.lastWatched = tenantIds
          return inner.currentOf(tenantIds)
        })
    }
  })
)
const TestLayer = ReadFreshness.layer.pipe(Layer.provideMerge(Probed), Layer.provideMerge(MemoryLayer))
/** A watch that never answers (until its timeout): only age ends the trust in an observation. */
const Stalled = Layer.effect(
  TenantRevisions,
  Effect.map(TenantRevisions, (inner) => ({ ...inner, currentOf: () => Effect.never }))
)
const Stale = ReadFreshness.layer.pipe(Layer.provideMerge(Stalled), Layer.provideMerge(Probed), Layer.provideMerge(MemoryLayer))

/** A write another replica made: the revisions move in storage, and no one here is told. */
const writtenElsewhere = (tenantId: string) => Effect.flatMap(TenantRevisions, (revisions) => revisions.moved(tenantId, Scopes))
/** A write of `scopes` made here. */
const written = (tenantId: string, scopes: ReadonlyArray<Scope> = Scopes) => writing(tenantId, scopes, () => Effect.void)
/** What every scope of the tenant reads as after one more write of all of them. */
const next = (revisions: { readonly applications: number; readonly functions: number }) => {
  const revision = Math.max(revisions.applications, revisions.functions) + 1
  return { applications: revision, functions: revision }
}
/**
 * The test clock moved on by the smallest step that orders two readings: the clock then tells a
 * read that starts after a write from one that may have started before it (equal readings do not).
 */
const tick = TestClock.adjust(Duration.millis(1))
/** The reads of storage `effect` made. */
const readsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = probe.reads
    const value = yield* effect
    return { value, reads: probe.reads - before }
  })

// Every test runs on the TestClock: nothing moves but what the test moves.
describe("read freshness", () => {
  it.effect("trusts an observed revision for TrustFor without asking again, and asks again after", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const first = yield* readsOf(freshness.revisions(tenantA))
      expect(first.reads).toBe(1)
      yield* writtenElsewhere(tenantA)
      const trusted = yield* readsOf(Effect.all(Array.from({ length: 50 }, () => freshness.revisions(tenantA))))
      expect(trusted).toEqual({ value: Array.from({ length: 50 }, () => first.value), reads: 0 })
      // As old as it may be and still trusted: the other replica's write is not seen yet.
      yield* TestClock.adjust(TrustFor)
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: first.value, reads: 0 })
      // Older: the reader asks for itself, and trusts the answer in turn.
      yield* tick
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: next(first.value), reads: 1 })
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: next(first.value), reads: 0 })
    }).pipe(Effect.provide(Stale)))

  it.effect("does not let a wall clock stepping back extend a trust", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      yield* TestClock.adjust(Duration.seconds(10))
      const before = yield* freshness.revisions(tenantA)
      yield* writtenElsewhere(tenantA)
      // The wall clock goes back 5 s (the monotonic one does not), then time passes past TrustFor.
      yield* TestClock.setTime(5_000)
      yield* TestClock.adjust(Duration.sum(TrustFor, Duration.millis(1)))
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: next(before), reads: 1 })
    }).pipe(Effect.provide(Stale)))

  it.effect("voids what it observed when a write of the tenant commits here, and trusts the next read again", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantA)
      yield* tick
      yield* written(tenantA)
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: next(before), reads: 1 })
      // That read began as the write's mark was set (the same reading): it is not trusted either.
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: next(before), reads: 1 })
      yield* tick
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: next(before), reads: 1 })
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: next(before), reads: 0 })
    }).pipe(Effect.provide(Stale)))

  it.effect("sees this process's own write at once whatever the case the tenant's id is spelt in", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantA)
      yield* tick
      yield* written(tenantA.toUpperCase())
      expect(yield* freshness.revisions(tenantA)).toEqual(next(before))
    }).pipe(Effect.provide(TestLayer)))

  it.effect("sees this process's write of one scope at once, the other scope as it was", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantA)
      yield* tick
      yield* written(tenantA, ["applications"])
      expect(yield* freshness.revisions(tenantA)).toEqual({ applications: next(before).applications, functions: before.functions })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("keeps trusting what it observed after a write here that changed nothing", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantA)
      yield* tick
      yield* writing(tenantA, Scopes, (unchanged) => unchanged)
      expect(yield* readsOf(freshness.revisions(tenantA))).toEqual({ value: before, reads: 0 })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("sees another replica's write by the next watch, well within the time it trusts an observation", () =>
    Effect.gen(function*() {
      expect(Duration.isLessThan(WatchEvery, TrustFor)).toBe(true)
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantB)
      yield* writtenElsewhere(tenantB)
      const watches = probe.watches
      // The watch runs on its own, once per WatchEvery: the reader never asks itself.
      yield* TestClock.adjust(WatchEvery)
      expect(probe.watches).toBeGreaterThan(watches)
      expect(probe.lastWatched).toEqual([tenantB])
      expect(yield* readsOf(freshness.revisions(tenantB))).toEqual({ value: next(before), reads: 0 })
      // Watched again and again, the observation stays trusted long past TrustFor.
      yield* TestClock.adjust(Duration.times(TrustFor, 10))
      expect(yield* readsOf(freshness.revisions(tenantB))).toEqual({ value: next(before), reads: 0 })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("does not trust what a read that began before a write's commit saw", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantB)
      yield* TestClock.adjust(Duration.sum(TrustFor, Duration.millis(1)))
      // A read that asks storage, held until after the write below committed and was told.
      const release = yield* Deferred.make<void>()
      probe.hold = release
      const slow = yield* Effect.forkChild(freshness.revisions(tenantB))
      for (let turn = 0; probe.hold !== undefined && turn < 100; turn++) yield* Effect.yieldNow
      expect(probe.hold).toBeUndefined()
      yield* tick
      yield* written(tenantB)
      yield* tick
      yield* Deferred.succeed(release, undefined)
      // What it saw may be as of before the write: it is answered to its reader, never trusted.
      expect(yield* Fiber.join(slow)).toEqual(before)
      expect(yield* readsOf(freshness.revisions(tenantB))).toEqual({ value: next(before), reads: 1 })
    }).pipe(Effect.provide(Stale)))

  it.effect("watches a tenant while it is read, and forgets it once no one read it for ForgetAfter", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      yield* freshness.revisions(tenantA)
      yield* freshness.revisions(tenantB)
      const half = Duration.millis(Duration.toMillis(ForgetAfter) / 2)
      yield* TestClock.adjust(half)
      expect(probe.lastWatched).toEqual([tenantA, tenantB])
      // Read again: watched for another ForgetAfter from now; the watch kept it trusted meanwhile.
      expect((yield* readsOf(freshness.revisions(tenantA))).reads).toBe(0)
      yield* TestClock.adjust(Duration.sum(half, WatchEvery))
      expect(probe.lastWatched).toEqual([tenantA])
      // Nobody reads tenant B any more: its next read asks storage, and it is watched from then on.
      expect((yield* readsOf(freshness.revisions(tenantB))).reads).toBe(1)
      yield* TestClock.adjust(Duration.sum(ForgetAfter, WatchEvery))
      const watches = probe.watches
      yield* TestClock.adjust(Duration.times(WatchEvery, 5))
      // Neither was read for ForgetAfter: no tenant is left to watch, and no statement is made.
      expect(probe.watches).toBe(watches)
      expect((yield* readsOf(freshness.revisions(tenantA))).reads).toBe(1)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("keeps a write's mark from being forgotten for ForgetAfter, whether the tenant was read before or never", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      yield* freshness.revisions(tenantB)
      yield* TestClock.adjust(Duration.millis(Duration.toMillis(ForgetAfter) / 2))
      yield* written(tenantA)
      yield* written(tenantB)
      yield* TestClock.adjust(Duration.subtract(ForgetAfter, WatchEvery))
      expect(probe.lastWatched).toEqual([tenantB, tenantA])
      const watches = probe.watches
      // Watched still as the marks are exactly ForgetAfter old, and no more after.
      yield* TestClock.adjust(WatchEvery)
      expect(probe.watches).toBe(watches + 1)
      yield* TestClock.adjust(Duration.times(WatchEvery, 2))
      expect(probe.watches).toBe(watches + 1)
      // What the last watch saw would still be trusted: forgotten, the tenants are asked for.
      expect((yield* readsOf(freshness.revisions(tenantA))).reads).toBe(1)
      expect((yield* readsOf(freshness.revisions(tenantB))).reads).toBe(1)
    }).pipe(Effect.provide(TestLayer)))
})
