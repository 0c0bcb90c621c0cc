import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Layer } from "effect"
import { TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { ReadFreshness, TrustFor, WatchEvery } from "../../src/usecases/ReadFreshness.js"
import { writing } from "../../src/usecases/Writing.js"
import { tenantA, tenantB } from "../support/Fixtures.js"
import { InMemoryReferential } from "../support/InMemoryReferential.js"

/** Counts the revision reads, and can hold the next single read until released. */
const probe = { reads: 0, watches: 0, hold: undefined as Deferred.Deferred<void> | undefined }
const Probed = Layer.effect(
  TenantRevisions,
  Effect.map(TenantRevisions, (inner) => ({
    ...inner,
    current: (tenantId: string) =>
      Effect.suspend(() => {
        probe.reads += 1
        const hold = probe.hold
        probe.hold = undefined
        return hold === undefined ? inner.current(tenantId) : Effect.zipLeft(inner.current(tenantId), Deferred.await(hold))
      }),
    currentOf: (tenantIds: ReadonlyArray<string>) => Effect.suspend(() => {
      probe.watches += 1
      return inner.currentOf(tenantIds)
    })
  }))
)
const TestLayer = ReadFreshness.layer.pipe(Layer.provideMerge(Probed), Layer.provideMerge(InMemoryReferential))
/** A watch that never answers: only age ends the trust in an observation. */
const Stalled = Layer.effect(
  TenantRevisions,
  Effect.map(TenantRevisions, (inner) => ({ ...inner, currentOf: () => Effect.never }))
)
const Stale = ReadFreshness.layer.pipe(Layer.provideMerge(Stalled), Layer.provideMerge(Probed), Layer.provideMerge(InMemoryReferential))

/** A write another replica made: the revision moves in storage, and no one here is told. */
const writtenElsewhere = (tenantId: string) => Effect.flatMap(TenantRevisions, (revisions) => revisions.bump(tenantId))

describe("read freshness", () => {
  it.live("trusts an observed revision without asking again for a while", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      yield* writing(tenantA, Effect.void)
      const before = probe.reads
      const first = yield* freshness.revision(tenantA)
      expect(yield* Effect.all(Array.from({ length: 50 }, () => freshness.revision(tenantA)))).toEqual(Array.from({ length: 50 }, () => first))
      expect(probe.reads - before).toBe(1)
    }).pipe(Effect.provide(TestLayer)))

  it.live("sees this process's own write at once", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revision(tenantA)
      yield* writing(tenantA, Effect.void)
      expect(yield* freshness.revision(tenantA)).toBe(before + 1)
    }).pipe(Effect.provide(TestLayer)))

  it.live("sees this process's own write at once whatever the case the tenant's id is spelt in", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revision(tenantA)
      yield* writing(tenantA.toUpperCase(), Effect.void)
      expect(yield* freshness.revision(tenantA)).toBe(before + 1)
    }).pipe(Effect.provide(TestLayer)))

  it.live("sees another replica's write by the next watch, well within the time it trusts an observation", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revision(tenantB)
      yield* writtenElsewhere(tenantB)
      const watchesBefore = probe.watches
      // The watch runs on its own: wait for two of its rounds, never asking ourselves.
      while (probe.watches < watchesBefore + 2) yield* Effect.sleep(Duration.millis(10))
      const readsBefore = probe.reads
      expect(yield* freshness.revision(tenantB)).toBe(before + 1)
      expect(probe.reads).toBe(readsBefore)
      expect(Duration.lessThan(WatchEvery, TrustFor)).toBe(true)
    }).pipe(Effect.provide(TestLayer)))

  it.live("asks again once an observation is older than it may be trusted, when no watch could refresh it", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const freshness = yield* ReadFreshness
        const before = yield* freshness.revision(tenantA)
        yield* writtenElsewhere(tenantA)
        expect(yield* freshness.revision(tenantA)).toBe(before)
        yield* Effect.sleep(Duration.sum(TrustFor, Duration.millis(50)))
        expect(yield* freshness.revision(tenantA)).toBe(before + 1)
      }).pipe(Effect.provide(Stale))
    }))

  it.live("does not trust what a read that began before a write's commit saw", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revision(tenantB)
      yield* Effect.sleep(Duration.sum(TrustFor, Duration.millis(20)))
      // A read that asks storage, held until after the write below committed and was told.
      const release = yield* Deferred.make<void>()
      probe.hold = release
      const slow = yield* Effect.fork(freshness.revision(tenantB))
      while (probe.hold !== undefined) yield* Effect.yieldNow()
      yield* writing(tenantB, Effect.void)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(slow)
      const readsBefore = probe.reads
      expect(yield* freshness.revision(tenantB)).toBe(before + 1)
      expect(probe.reads).toBe(readsBefore + 1)
    }).pipe(Effect.provide(Stale)))
})
