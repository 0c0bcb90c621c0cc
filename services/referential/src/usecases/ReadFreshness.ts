import { Clock, Context, Duration, Effect, Layer, Schedule } from "effect"
import { NeverWritten, type ScopeRevisions, TenantRevisions } from "../ports/TenantRevisions.js"

/** How often the revisions of the tenants read lately are asked for, all in one statement. */
export const WatchEvery = Duration.millis(200)
/**
 * How long observed revisions are trusted without asking again. A write committed on another
 * replica is seen by the first watch that starts after it, at most WatchEvery later; past this
 * age a reader asks itself. Either way no reader here serves what was replaced more than this
 * long ago (docs/architecture.md#the-read-path): under the 1 s the product allows.
 */
export const TrustFor = Duration.millis(700)
/** Longest wait on one watch statement. */
const WatchTimeout = Duration.seconds(2)
/** Tenants no one read (nor wrote here) for this long are no longer watched. */
export const ForgetAfter = Duration.seconds(60)
/** Tenants asked for in one statement at most. */
const WatchChunk = 1_000

/** Times are milliseconds of the monotonic reading of the layer's `Clock`: a wall clock stepping back must not extend a trust. */
interface Observation {
  /** Undefined when unknown: the tenant was written here since the last observation. */
  revisions: ScopeRevisions | undefined
  /** When the read that saw `revisions` started: what it saw is true at least as of then. */
  observedAt: number
  /** The last commit of a write of the tenant in this process: older observations are void. */
  writtenAt: number
  usedAt: number
}

export interface ReadFreshnessShape {
  /**
   * The tenant's current revisions, every scope's, as readers may rely on them: those observed at
   * most TrustFor ago, or else read now (one indexed read) and watched from then on.
   */
  readonly revisions: (tenantId: string) => Effect.Effect<ScopeRevisions>
  /**
   * A write of the tenant committed in this process: its readers here ask again at once, about
   * every scope (one read tells them all, and knowing which scope moved would save nothing).
   */
  readonly written: (tenantId: string) => Effect.Effect<void>
}

/**
 * What lets this replica's readers reuse what they derived from a tenant's referential (the
 * encoded answers of the read cache) without a round trip to PostgreSQL per request, while every
 * write, on any replica, reaches them within TrustFor. The tenants read lately are watched
 * together every WatchEvery; a tenant's own writes here void what was observed before them.
 */
export class ReadFreshness extends Context.Service<ReadFreshness, ReadFreshnessShape>()("@portfolio/referential/ReadFreshness") {
  static readonly layer = Layer.effect(
    ReadFreshness,
    Effect.gen(function*() {
      const stored = yield* TenantRevisions
      const watched = new Map<string, Observation>()
      const trustMs = Duration.toMillis(TrustFor)
      const forgetMs = Duration.toMillis(ForgetAfter)
      // Effect's clock (a TestClock in tests), its monotonic reading, taken once for the watch,
      // the readers and the writers alike: what they compare must come from one clock; and a
      // trusted read then costs its Effect.succeed and one reading, nothing more.
      const clock = yield* Clock.Clock
      const monotonicMillis = () => Number(clock.monotonicTimeNanosUnsafe()) / 1_000_000

      /** Keeps what a read started at `startedAt` saw, unless something newer is known. */
      const observe = (tenantId: string, revisions: ScopeRevisions, startedAt: number, usedAt?: number) => {
        const known = watched.get(tenantId)
        if (known === undefined) return void watched.set(tenantId, { revisions, observedAt: startedAt, writtenAt: -Infinity, usedAt: usedAt ?? startedAt })
        if (usedAt !== undefined) known.usedAt = usedAt
        if (startedAt <= known.writtenAt || startedAt < known.observedAt) return
        known.revisions = revisions
        known.observedAt = startedAt
      }

      const watchOnce = Effect.gen(function*() {
        const now = monotonicMillis()
        for (const [tenantId, observation] of watched) {
          if (now - observation.usedAt > forgetMs) watched.delete(tenantId)
        }
        const tenants = [...watched.keys()]
        for (let i = 0; i < tenants.length; i += WatchChunk) {
          const chunk = tenants.slice(i, i + WatchChunk)
          const startedAt = monotonicMillis()
          // A watch that hangs must not stop the next ones: observations age meanwhile.
          const current = yield* stored.currentOf(chunk).pipe(Effect.timeoutOrElse({ duration: WatchTimeout, orElse: () => Effect.fail(new Error("the watch of tenant revisions timed out")) }))
          for (const tenantId of chunk) observe(tenantId, current.get(tenantId) ?? NeverWritten, startedAt)
        }
      })
      // A failed watch leaves observations to age: readers then ask for themselves.
      yield* watchOnce.pipe(
        Effect.catchCause((cause) => Effect.logWarning("tenant revisions not watched this time", cause)),
        Effect.repeat(Schedule.spaced(WatchEvery)),
        Effect.forkScoped
      )

      return ReadFreshness.of({
        revisions: (tenantSpelling) =>
          Effect.suspend(() => {
            const tenantId = tenantSpelling.toLowerCase()
            const now = monotonicMillis()
            const known = watched.get(tenantId)
            if (known?.revisions !== undefined && now - known.observedAt <= trustMs) {
              known.usedAt = now
              return Effect.succeed(known.revisions)
            }
            return Effect.map(stored.current(tenantId), (current) => {
              observe(tenantId, current, now, now)
              return current
            })
          }),
        written: (tenantSpelling) =>
          Effect.sync(() => {
            // UUIDs compare without case in PostgreSQL: the admin path may spell the tenant otherwise than readers.
            const tenantId = tenantSpelling.toLowerCase()
            const now = monotonicMillis()
            // Kept even for a tenant not watched yet: a read that started before the commit must
            // not leave what it saw as trusted.
            const known = watched.get(tenantId)
            if (known === undefined) {
              watched.set(tenantId, { revisions: undefined, observedAt: -Infinity, writtenAt: now, usedAt: now })
            } else {
              known.revisions = undefined
              known.writtenAt = now
              // Kept from the pruning for a while: the mark is what voids a read begun before the commit.
              known.usedAt = now
            }
          })
      })
    })
  )
}
