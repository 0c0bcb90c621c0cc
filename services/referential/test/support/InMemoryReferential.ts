import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Layer } from "effect"
import { ReferentialOutbox } from "../../src/ports/ReferentialOutbox.js"
import { TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { InMemoryApplications } from "./InMemoryApplications.js"
import { InMemoryDas } from "./InMemoryDas.js"
import { InMemoryFunctions } from "./InMemoryFunctions.js"
import { ReferentialMemory } from "./ReferentialMemory.js"

const InMemoryRevisions = Layer.effect(
  TenantRevisions,
  Effect.map(ReferentialMemory, ({ read, write }) =>
    TenantRevisions.of({
      bump: (tenantId) => write(tenantId, (state) => void (state.revision += 1)),
      current: (tenantId) => read(tenantId, (state) => state.revision),
      currentOf: (tenantIds) =>
        Effect.map(Effect.forEach(tenantIds, (tenantId) => read(tenantId, (state) => [tenantId, state.revision] as const)), (pairs) =>
          new Map(pairs.filter(([, revision]) => revision > 0)))
    }))
)

const ReferentialOutboxMemory = Layer.effect(
  ReferentialOutbox,
  Effect.map(ReferentialMemory, ({ write }) =>
    ReferentialOutbox.of({
      append: (events) => Effect.forEach(events, (event) => write(event.tenantId, (state) => void state.events.push(event)), { discard: true })
    }))
)

const InMemoryUnitOfWork = Layer.effect(UnitOfWork, Effect.map(ReferentialMemory, (memory) => memory.unitOfWork))

/**
 * Every port of the referential in memory, with the contract of the PostgreSQL adapters (the
 * contract suites of test/integration run the same cases against both), and the rows themselves.
 */
export const InMemoryReferential = Layer.mergeAll(
  ReferentialOutboxMemory,
  InMemoryApplications,
  InMemoryDas,
  InMemoryFunctions,
  InMemoryRevisions,
  InMemoryUnitOfWork
).pipe(
  Layer.provideMerge(ReferentialMemory.layer)
)
