import { Effect, Layer, Option } from "effect"
import { DasRepository } from "../../src/ports/DasRepository.js"
import { MemoryStore } from "./MemoryStore.js"

/** PostgreSQL's foreign keys, which the in-memory rows must honour as the contract suite expects. */
const mustExist = (what: string) => Effect.die(new Error(`${what} does not exist (foreign key)`))

export const DasRepositoryMemory = Layer.effect(
  DasRepository,
  Effect.map(MemoryStore, ({ read, write }) =>
    DasRepository.of({
      find: (tenantId, id) => read(tenantId, (state) => Option.fromNullishOr(state.das.get(id))),
      insert: (tenantId, das) =>
        Effect.flatten(write(tenantId, (state) => {
          if (!state.applications.has(das.applicationCode)) return mustExist(`application ${das.applicationCode}`)
          if (state.das.has(das.id)) return Effect.die(new Error(`DAS ${das.id} exists (primary key)`))
          state.das.set(das.id, das)
          return Effect.void
        })),
      update: (tenantId, das) => write(tenantId, (state) => void (state.das.has(das.id) && state.das.set(das.id, das)))
    }))
)
