import { UnitOfWork } from "@portfolio/platform"
import { Effect } from "effect"
import { TenantRevisions } from "../ports/TenantRevisions.js"

/**
 * Runs `work` as one write of the tenant's referential: atomically, after the tenant's previous
 * writers have committed (the bump comes first and holds the tenant's lock until the commit, so
 * the checks of `work`, code free or no cycle, see their writes), and moving the revision the
 * read cache compares.
 */
export const writing = <A, E, R>(tenantId: string, work: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const unitOfWork = yield* UnitOfWork
    const revisions = yield* TenantRevisions
    return yield* unitOfWork.run(Effect.zipRight(revisions.bump(tenantId), work))
  })
