import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Layer } from "effect"
import { ReferentialOutbox } from "../../src/ports/ReferentialOutbox.js"
import { TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { ApplicationRepositoryMemory } from "./ApplicationRepositoryMemory.js"
import { DasRepositoryMemory } from "./DasRepositoryMemory.js"
import { FunctionRepositoryMemory } from "./FunctionRepositoryMemory.js"
import { MemoryStore } from "./MemoryStore.js"

const TenantRevisionsMemory = Layer.effect(
  TenantRevisions,
  Effect.map(MemoryStore, ({ read, write }) =>
    TenantRevisions.of({
      // A write that changes nothing: what takes the tenant's lock in memory.
      lock: (tenantId) => write(tenantId, () => undefined),
      moved: (tenantId, scopes) =>
        scopes.length === 0 ? Effect.void : write(tenantId, (state) => {
          state.revision += 1
          state.scopeRevisions = { ...state.scopeRevisions, ...Object.fromEntries(scopes.map((scope) => [scope, state.revision])) }
        }),
      current: (tenantId) => read(tenantId, (state) => state.scopeRevisions),
      currentOf: (tenantIds) =>
        Effect.map(Effect.forEach(tenantIds, (tenantId) => read(tenantId, (state) => [tenantId, state] as const)), (pairs) =>
          new Map(pairs.filter(([, state]) => state.revision > 0).map(([tenantId, state]) => [tenantId, state.scopeRevisions])))
    }))
)

const ReferentialOutboxMemory = Layer.effect(
  ReferentialOutbox,
  Effect.map(MemoryStore, ({ write }) =>
    ReferentialOutbox.of({
      append: (events) => Effect.forEach(events, (event) => write(event.tenantId, (state) => void state.events.push(event)), { discard: true })
    }))
)

const UnitOfWorkMemory = Layer.effect(UnitOfWork, Effect.map(MemoryStore, (memory) => memory.unitOfWork))

/**
 * Every port of the referential in memory, with the contract of the PostgreSQL adapters (the
 * contract suites of test/integration run the same cases against both), and the rows themselves.
 */
export const MemoryLayer = Layer.mergeAll(
  ReferentialOutboxMemory,
  ApplicationRepositoryMemory,
  DasRepositoryMemory,
  FunctionRepositoryMemory,
  TenantRevisionsMemory,
  UnitOfWorkMemory
).pipe(
  Layer.provideMerge(MemoryStore.layer)
)
