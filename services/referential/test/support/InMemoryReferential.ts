import { UnitOfWork } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { ApplicationEvents } from "../../src/ports/ApplicationEvents.js"
import { TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { InMemoryApplications } from "./InMemoryApplications.js"
import { InMemoryFunctions } from "./InMemoryFunctions.js"
import { ReferentialMemory } from "./ReferentialMemory.js"

const InMemoryRevisions = Layer.effect(
  TenantRevisions,
  Effect.map(ReferentialMemory, ({ read, write }) =>
    TenantRevisions.of({
      bump: (tenantId) => write(tenantId, (state) => void (state.revision += 1)),
      current: (tenantId) => read(tenantId, (state) => state.revision)
    }))
)

const InMemoryApplicationEvents = Layer.effect(
  ApplicationEvents,
  Effect.map(ReferentialMemory, ({ write }) =>
    ApplicationEvents.of({
      append: (events) => Effect.forEach(events, (event) => write(event.tenantId, (state) => void state.events.push(event)), { discard: true })
    }))
)

const InMemoryUnitOfWork = Layer.effect(UnitOfWork, Effect.map(ReferentialMemory, (memory) => memory.unitOfWork))

/**
 * Every port of the referential in memory, with the contract of the PostgreSQL adapters (the
 * contract suites of test/integration run the same cases against both), and the rows themselves.
 */
export const InMemoryReferential = Layer.mergeAll(InMemoryApplicationEvents, InMemoryApplications, InMemoryFunctions, InMemoryRevisions, InMemoryUnitOfWork).pipe(
  Layer.provideMerge(ReferentialMemory.layer)
)
