import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Exit, Layer, Semaphore } from "effect"
import { MembershipDeskMemory } from "./MembershipDeskMemory.js"
import { PartnerClientRepositoryMemory } from "./PartnerClientRepositoryMemory.js"
import { PatRequestRepositoryMemory } from "./PatRequestRepositoryMemory.js"
import { PatRepositoryMemory } from "./PatRepositoryMemory.js"
import { ScimTokenRepositoryMemory } from "./ScimTokenRepositoryMemory.js"
import { SecurityLogMemory } from "@portfolio/platform/testing"

/**
 * The gateway's units of work over its memory stores, as PostgreSQL runs them for the use cases:
 * one unit at a time (a unit of PostgreSQL waits on the rows another holds), and a failed unit
 * leaves every store as it was before it.
 */
export const UnitOfWorkMemory = Layer.effect(
  UnitOfWork,
  Effect.gen(function*() {
    const stores = [
      yield* PatRepositoryMemory,
      yield* PatRequestRepositoryMemory,
      yield* PartnerClientRepositoryMemory,
      yield* ScimTokenRepositoryMemory,
      yield* SecurityLogMemory
    ]
    const one = yield* Semaphore.make(1)
    return UnitOfWork.of({
      run: (work) =>
        one.withPermits(1)(
          Effect.gen(function*() {
            const restores = yield* Effect.all(stores.map((store) => store.snapshot))
            const exit = yield* Effect.exit(work)
            if (Exit.isFailure(exit)) yield* Effect.all(restores)
            return yield* exit
          })
        )
    })
  })
)

/**
 * Every memory store, the security log among them, and their unit of work, with the doubles
 * themselves for the tests to drive; and the record of memberships the approvals read.
 */
export const GatewayStoresMemory = UnitOfWorkMemory.pipe(
  Layer.provideMerge(
    Layer.mergeAll(PatRepositoryMemory.layer, PatRequestRepositoryMemory.layer, PartnerClientRepositoryMemory.layer, ScimTokenRepositoryMemory.layer, SecurityLogMemory.layer)
  ),
  Layer.merge(MembershipDeskMemory.layer)
)
