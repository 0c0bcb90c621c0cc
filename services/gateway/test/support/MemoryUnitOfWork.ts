import { UnitOfWork } from "@portfolio/platform"
import { Effect, Exit, Layer } from "effect"
import { MemoryPatRequestStore } from "./MemoryPatRequestStore.js"
import { MemoryPatStore } from "./MemoryPatStore.js"

/**
 * The gateway's units of work over its memory stores, as PostgreSQL runs them for the use cases:
 * one unit at a time (a unit of PostgreSQL waits on the rows another holds), and a failed unit
 * leaves both stores as they were before it.
 */
export const MemoryUnitOfWork = Layer.effect(
  UnitOfWork,
  Effect.gen(function*() {
    const pats = yield* MemoryPatStore
    const requests = yield* MemoryPatRequestStore
    const one = yield* Effect.makeSemaphore(1)
    return UnitOfWork.of({
      run: (work) =>
        one.withPermits(1)(
          Effect.gen(function*() {
            const restorePats = yield* pats.snapshot
            const restoreRequests = yield* requests.snapshot
            const exit = yield* Effect.exit(work)
            if (Exit.isFailure(exit)) yield* Effect.zipRight(restorePats, restoreRequests)
            return yield* exit
          })
        )
    })
  })
)

/** Both memory stores and their unit of work, with the doubles themselves for the tests to drive. */
export const MemoryGatewayStores = MemoryUnitOfWork.pipe(
  Layer.provideMerge(Layer.merge(MemoryPatStore.layer, MemoryPatRequestStore.layer))
)
