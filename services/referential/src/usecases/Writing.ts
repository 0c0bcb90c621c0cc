import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Option } from "effect"
import { type Scope, TenantRevisions } from "../ports/TenantRevisions.js"
import { ReadFreshness } from "./ReadFreshness.js"

/**
 * Runs `work` as one write of the tenant's referential: atomically, after the tenant's previous
 * writers have committed (the tenant's lock comes first and holds until the commit, so the checks
 * of `work`, code free, no cycle, same content, see their writes), then moving the revisions of
 * `scopes`, what the write may change of the public reads (ports/TenantRevisions.ts), which the
 * read cache compares; this process's readers then stop trusting what they observed before.
 *
 * `work` is given `unchanged`: once it has found that it has nothing to write (a PUT of the same
 * content, a link that exists), it says so and no revision moves, so that a no-op leaves every
 * cached answer valid. Any other outcome that commits moves them all: a forgotten `unchanged`
 * costs a rebuild, never a stale answer.
 */
export const writing = <A, E, R>(
  tenantId: string,
  scopes: ReadonlyArray<Scope>,
  work: (unchanged: Effect.Effect<void>) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const unitOfWork = yield* UnitOfWork
    const revisions = yield* TenantRevisions
    // Once the outcome is known (or unknowable), this process's readers of the tenant ask again,
    // unless nothing was to move (what they observed still holds); a process without readers
    // that reuse answers (use-case tests) has nothing to tell.
    const freshness = yield* Effect.serviceOption(ReadFreshness)
    let wroteNothing = false
    const unchanged = Effect.sync(() => void (wroteNothing = true))
    const moving = () => scopes.length > 0 && !wroteNothing
    return yield* unitOfWork.run(
      revisions.lock(tenantId).pipe(
        Effect.andThen(work(unchanged)),
        Effect.tap(() => moving() ? revisions.moved(tenantId, scopes) : Effect.void)
      )
    ).pipe(
      Effect.ensuring(Effect.suspend(() => moving() && Option.isSome(freshness) ? freshness.value.written(tenantId) : Effect.void))
    )
  })
