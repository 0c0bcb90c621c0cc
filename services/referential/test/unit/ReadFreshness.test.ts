import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Layer } from "effect"
import { type Scope, Scopes, TenantRevisions } from "../../src/ports/TenantRevisions.js"
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
        return hold === undefined ? inner.current(tenantId) : Effect.tap(inner.current(tenantId), () => Deferred.await(hold))
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

/** A write another replica made: the revisions move in storage, and no one here is told. */
const writtenElsewhere = (tenantId: string) => Effect.flatMap(TenantRevisions, (revisions) => revisions.moved(tenantId, Scopes))
/** A write of `scopes` made here. */
const written = (tenantId: string, scopes: ReadonlyArray<Scope> = Scopes) => writing(tenantId, scopes, () => Effect.void)
/** What every scope of the tenant reads as after one more write of all of them. */
const next = (revisions: { readonly applications: number; readonly functions: number }) => {
  const revision = Math.max(revisions.applications, revisions.functions) + 1
  return { applications: revision, functions: revision }
}

describe("read freshness", () => {
  it.live("trusts an observed revision without asking again for a while", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      yield* written(tenantA)
      const before = probe.reads
      const first = yield* freshness.revisions(tenantA)
      expect(yield* Effect.all(Array.from({ length: 50 }, () => freshness.revisions(tenantA)))).toEqual(Array.from({ length: 50 }, () => first))
      expect(probe.reads - before).toBe(1)
    }).pipe(Effect.provide(TestLayer)))

  it.live("sees this process's own write at once", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantA)
      yield* written(tenantA)
      expect(yield* freshness.revisions(tenantA)).toEqual(next(before))
    }).pipe(Effect.provide(TestLayer)))

  it.live("sees this process's own write at once whatever the case the tenant's id is spelt in", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantA)
      yield* written(tenantA.toUpperCase())
      expect(yield* freshness.revisions(tenantA)).toEqual(next(before))
    }).pipe(Effect.provide(TestLayer)))

  it.live("sees this process's write of one scope at once, the other scope as it was", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantA)
      yield* written(tenantA, ["applications"])
      expect(yield* freshness.revisions(tenantA)).toEqual({ applications: next(before).applications, functions: before.functions })
    }).pipe(Effect.provide(TestLayer)))

  it.live("keeps trusting what it observed after a write here that changed nothing", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantA)
      const reads = probe.reads
      yield* writing(tenantA, Scopes, (unchanged) => unchanged)
      expect(yield* freshness.revisions(tenantA)).toEqual(before)
      expect(probe.reads).toBe(reads)
    }).pipe(Effect.provide(TestLayer)))

  it.live("sees another replica's write by the next watch, well within the time it trusts an observation", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantB)
      yield* writtenElsewhere(tenantB)
      const watchesBefore = probe.watches
      // The watch runs on its own: wait for two of its rounds, never asking ourselves.
      while (probe.watches < watchesBefore + 2) yield* Effect.sleep(Duration.millis(10))
      const readsBefore = probe.reads
      expect(yield* freshness.revisions(tenantB)).toEqual(next(before))
      expect(probe.reads).toBe(readsBefore)
      expect(Duration.isLessThan(WatchEvery, TrustFor)).toBe(true)
    }).pipe(Effect.provide(TestLayer)))

  it.live("asks again once an observation is older than it may be trusted, when no watch could refresh it", () =>
    Effect.gen(function*() {
      yield* Effect.gen(function*() {
        const freshness = yield* ReadFreshness
        const before = yield* freshness.revisions(tenantA)
        yield* writtenElsewhere(tenantA)
        expect(yield* freshness.revisions(tenantA)).toEqual(before)
        yield* Effect.sleep(Duration.sum(TrustFor, Duration.millis(50)))
        expect(yield* freshness.revisions(tenantA)).toEqual(next(before))
      }).pipe(Effect.provide(Stale))
    }))

  it.live("does not trust what a read that began before a write's commit saw", () =>
    Effect.gen(function*() {
      const freshness = yield* ReadFreshness
      const before = yield* freshness.revisions(tenantB)
      yield* Effect.sleep(Duration.sum(TrustFor, Duration.millis(20)))
      // A read that asks storage, held until after the write below committed and was told.
      const release = yield* Deferred.make<void>()
      probe.hold = release
      const slow = yield* Effect.forkChild(freshness.revisions(tenantB))
      while (probe.hold !== undefined) yield* Effect.yieldNow
      yield* written(tenantB)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(slow)
      const readsBefore = probe.reads
      expect(yield* freshness.revisions(tenantB)).toEqual(next(before))
      expect(probe.reads).toBe(readsBefore + 1)
    }).pipe(Effect.provide(Stale)))
})
