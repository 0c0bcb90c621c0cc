import type { ChangeLogEntry, Das, ReferentialEvent } from "@portfolio/domain"
import type { KeysetRequest } from "@portfolio/platform/http"
import type { UnitOfWorkShape } from "@portfolio/platform/sql"
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import type { ApplicationRecord } from "../../src/domain/ApplicationRecord.js"
import type { FunctionFields, FunctionLink } from "../../src/domain/FunctionRecord.js"
import { NeverWritten, type ScopeRevisions } from "../../src/ports/TenantRevisions.js"

/** One tenant's rows. */
export interface TenantState {
  readonly applications: Map<string, ApplicationRecord>
  /** Each application's write sequence: the store's count of application writes at its last write. */
  readonly applicationWriteSeqs: Map<string, number>
  /** In append order. */
  readonly changes: Array<ChangeLogEntry>
  /** The outbox, in append order. */
  readonly events: Array<ReferentialEvent>
  readonly das: Map<string, Das>
  readonly functions: Map<string, FunctionFields>
  links: Array<FunctionLink>
  revision: number
  /** Per scope, the `revision` at which it last moved. */
  scopeRevisions: ScopeRevisions
}

const emptyTenant = (): TenantState => ({ applications: new Map(), applicationWriteSeqs: new Map(), changes: [], events: [], das: new Map(), functions: new Map(), links: [], revision: 0, scopeRevisions: NeverWritten })
const copyOf = (state: TenantState): TenantState => ({
  applications: new Map(state.applications),
  applicationWriteSeqs: new Map(state.applicationWriteSeqs),
  changes: [...state.changes],
  events: [...state.events],
  das: new Map(state.das),
  functions: new Map(state.functions),
  links: [...state.links],
  revision: state.revision,
  scopeRevisions: state.scopeRevisions
})

/** An open unit of work: copies of the tenants it wrote, over what its parent (or the committed state) holds. */
interface Unit {
  readonly parent: Unit | undefined
  readonly written: Map<string, TenantState>
  /** The tenants the outermost unit has locked, until it ends. */
  readonly locked: Set<string>
}

/** PostgreSQL's COLLATE "C" order: UTF-8 bytes, where JavaScript's `<` compares UTF-16 units. */
export const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
export const byCode = <A extends { readonly code: string }>(a: A, b: A) => bytewise(a.code, b.code)

/** Of rows sorted by code, the page a keyset request asks for; all of them without one. */
export const keysetByCode = <A extends { readonly code: string }>(sorted: ReadonlyArray<A>, page: KeysetRequest<string> | undefined) => {
  if (page === undefined) return sorted
  const after = page.after
  return sorted.filter((row) => Option.isNone(after) || bytewise(row.code, after.value) > 0).slice(0, page.limit)
}

interface MemoryStoreShape {
  /** The tenant's rows as the current fiber sees them: its unit of work's, or else the committed ones. */
  readonly read: <A>(tenantId: string, f: (state: TenantState) => A) => Effect.Effect<A>
  /** Changes the tenant's rows in the current unit of work, or in a unit of its own outside any. */
  readonly write: <A>(tenantId: string, f: (state: TenantState) => A) => Effect.Effect<A>
  readonly unitOfWork: UnitOfWorkShape
}

/**
 * The referential's rows in memory, with what PostgreSQL gives the adapters: a unit of work
 * commits all of its writes or none, other fibers see them only once it commits (read committed),
 * and the first write of a tenant locks that tenant until the unit ends, so that the tenant's
 * writers run one after the other while other tenants' writers go on.
 */
/** Numbers each memory's reference to its fiber's unit of work, so that two memories never share one. */
let memories = 0

export class MemoryStore extends Context.Service<MemoryStore, MemoryStoreShape>()("test/ReferentialMemory") {
  static readonly layer = Layer.effect(
    MemoryStore,
    Effect.gen(function*() {
      const committed = new Map<string, TenantState>()
      const currentUnit = Context.Reference<Unit | undefined>(`test/ReferentialMemory/unit/${memories++}`, { defaultValue: () => undefined })
      const locks = new Map<string, Semaphore.Semaphore>()
      const lockOf = (tenantId: string) => {
        let lock = locks.get(tenantId)
        if (lock === undefined) {
          lock = Semaphore.makeUnsafe(1)
          locks.set(tenantId, lock)
        }
        return lock
      }
      const seen = (unit: Unit | undefined, tenantId: string): TenantState | undefined =>
        unit === undefined ? committed.get(tenantId) : unit.written.get(tenantId) ?? seen(unit.parent, tenantId)

      const run = <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.flatMap(currentUnit, (parent) => {
          const unit: Unit = { parent, written: new Map(), locked: parent?.locked ?? new Set() }
          const into = parent?.written ?? committed
          const done = Effect.tap(
            Effect.provideService(work, currentUnit, unit),
            () => Effect.sync(() => unit.written.forEach((state, tenantId) => into.set(tenantId, state)))
          )
          if (parent !== undefined) return done
          const unlock = Effect.suspend(() => Effect.forEach(unit.locked, (tenantId) => lockOf(tenantId).release(1), { discard: true }))
          return Effect.ensuring(done, unlock)
        })

      const lock = (unit: Unit, tenantId: string) =>
        unit.locked.has(tenantId)
          ? Effect.void
          : Effect.uninterruptibleMask((restore) =>
            Effect.andThen(restore(lockOf(tenantId).take(1)), Effect.sync(() => unit.locked.add(tenantId)))
          )

      const write = <A>(tenantId: string, f: (state: TenantState) => A): Effect.Effect<A> =>
        Effect.flatMap(currentUnit, (unit) => {
          if (unit === undefined) return run(write(tenantId, f))
          // The copy is taken once the lock is held, so that it holds the previous writer's commit.
          return Effect.andThen(
            lock(unit, tenantId),
            Effect.sync(() => {
              let state = unit.written.get(tenantId)
              if (state === undefined) {
                state = copyOf(seen(unit.parent, tenantId) ?? emptyTenant())
                unit.written.set(tenantId, state)
              }
              return f(state)
            })
          )
        })

      return {
        read: (tenantId, f) => Effect.map(currentUnit, (unit) => f(seen(unit, tenantId) ?? emptyTenant())),
        write,
        unitOfWork: { run }
      }
    })
  )
}
