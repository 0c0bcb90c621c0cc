import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Option } from "effect"
import { TenantRevisions } from "../ports/TenantRevisions.js"
import { ReadFreshness } from "./ReadFreshness.js"

/**
 * Runs `work` as one write of the tenant's referential: atomically, after the tenant's previous
 * writers have committed (the bump comes first and holds the tenant's lock until the commit, so
 * the checks of `work`, code free or no cycle, see their writes), and moving the revision the
 * read cache compares; this process's readers then stop trusting what they observed before.
 */
export const writing = <A, E, R>(tenantId: string, work: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const unitOfWork = yield* UnitOfWork
    const revisions = yield* TenantRevisions
    // Once the outcome is known (or unknowable), this process's readers of the tenant ask again;
    // a process without readers that reuse answers (use-case tests) has nothing to tell.
    const freshness = yield* Effect.serviceOption(ReadFreshness)
    return yield* unitOfWork.run(Effect.zipRight(revisions.bump(tenantId), work)).pipe(
      Effect.ensuring(Effect.sync(() => Option.map(freshness, (readers) => readers.written(tenantId))))
    )
  })
