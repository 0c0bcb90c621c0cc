import { Effect, Layer, Option, Stream } from "effect"
import { inTreeOrder } from "./Forests.js"
import type { FunctionFields, LocatedFunction } from "../../src/domain/FunctionRecord.js"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { byCode, bytewise, keysetByCode, MemoryStore, type TenantState } from "./MemoryStore.js"

const codesOf = (state: TenantState, functionId: string) =>
  state.links.filter((link) => link.functionId === functionId).map((link) => link.applicationCode).sort(bytewise)

const pathOf = (state: TenantState, fn: FunctionFields): Array<string> => {
  const path = [fn.code]
  let parentId = fn.parentId
  while (parentId !== null) {
    const parent = state.functions.get(parentId)!
    path.unshift(parent.code)
    parentId = parent.parentId
  }
  return path
}

const locate = (state: TenantState, fn: FunctionFields): LocatedFunction => ({
  ...fn,
  applicationCodes: codesOf(state, fn.id),
  path: pathOf(state, fn)
})

const WalkBatch = 3

const sortedFunctions = (state: TenantState) => [...state.functions.values()].sort(byCode)

const sameLink = (a: { functionId: string; applicationCode: string }) => (b: { functionId: string; applicationCode: string }) =>
  a.functionId === b.functionId && a.applicationCode === b.applicationCode

export const FunctionRepositoryMemory = Layer.effect(
  FunctionRepository,
  Effect.map(MemoryStore, ({ read, write }) =>
    FunctionRepository.of({
      // A few functions per batch, so that what reads a walk meets its batches' ends everywhere.
      walk: (tenantId) =>
        Stream.unwrap(read(tenantId, (state) =>
          Stream.fromIterable(inTreeOrder([...state.functions.values()].map((fn) => ({ ...fn, applicationCodes: codesOf(state, fn.id) })))).pipe(
            Stream.grouped(WalkBatch)
          ))),
      find: (tenantId, id) =>
        read(tenantId, (state) => {
          const fn = state.functions.get(id)
          return fn === undefined ? Option.none() : Option.some(locate(state, fn))
        }),
      findByCode: (tenantId, code) => read(tenantId, (state) => Option.fromNullishOr([...state.functions.values()].find((fn) => fn.code === code))),
      search: (tenantId, text, page) =>
        read(tenantId, (state) => {
          const needle = text.toLowerCase()
          const found = sortedFunctions(state)
            .filter((fn) => [fn.code, fn.name, fn.description ?? ""].some((value) => value.toLowerCase().includes(needle)))
          return keysetByCode(found, page).map((fn) => locate(state, fn))
        }),
      listByApplication: (tenantId, applicationCode, page) =>
        read(tenantId, (state) =>
          keysetByCode(sortedFunctions(state).filter((fn) => state.links.some(sameLink({ functionId: fn.id, applicationCode }))), page)
            .map((fn) => locate(state, fn))),
      selfAndAncestorIds: (tenantId, id) =>
        read(tenantId, (state) => {
          const ids: Array<string> = []
          let current = state.functions.get(id)
          while (current !== undefined) {
            ids.push(current.id)
            current = current.parentId === null ? undefined : state.functions.get(current.parentId)
          }
          return ids
        }),
      hasChildren: (tenantId, id) => read(tenantId, (state) => [...state.functions.values()].some((fn) => fn.parentId === id)),
      count: (tenantId) => read(tenantId, (state) => state.functions.size),
      insert: (tenantId, fields) => write(tenantId, (state) => void state.functions.set(fields.id, fields)),
      update: (tenantId, fields) => write(tenantId, (state) => void state.functions.set(fields.id, fields)),
      remove: (tenantId, id) =>
        write(tenantId, (state) => {
          state.functions.delete(id)
          state.links = state.links.filter((link) => link.functionId !== id)
        }),
      link: (tenantId, link) =>
        write(tenantId, (state) => {
          if (!state.links.some(sameLink(link))) state.links.push(link)
        }),
      unlink: (tenantId, link) => write(tenantId, (state) => void (state.links = state.links.filter((other) => !sameLink(link)(other)))),
      insertMany: (tenantId, functions) =>
        write(tenantId, (state) => {
          for (const fn of functions) state.functions.set(fn.id, fn)
        }),
      insertLinks: (tenantId, links) => write(tenantId, (state) => void state.links.push(...links)),
      // Nothing is planned in memory.
      settleBulkLoad: Effect.void,
      counts: (tenantId) =>
        read(tenantId, (state) => {
          const functions = [...state.functions.values()]
          return {
            functionCount: functions.length,
            rootFunctionCount: functions.filter((fn) => fn.parentId === null).length,
            maxDepth: functions.reduce((max, fn) => Math.max(max, pathOf(state, fn).length), 0),
            functionsWithoutApplication: functions.filter((fn) => codesOf(state, fn.id).length === 0).length,
            linkCount: state.links.length,
            linkedApplicationCount: new Set(state.links.map((link) => link.applicationCode)).size
          }
        })
    }))
)
