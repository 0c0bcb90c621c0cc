import type { ChangeLogEntry } from "@portfolio/domain"
import { LinkedApplication } from "@portfolio/domain"
import type { ApplicationRecord } from "../../src/domain/ApplicationRecord.js"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import type { FunctionFields, FunctionLink, LocatedFunction } from "../../src/domain/FunctionRecord.js"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { ReferentialStore } from "../../src/ports/ReferentialStore.js"
import { Effect, Exit, Layer, Option } from "effect"

interface TenantState {
  applications: Map<string, ApplicationRecord>
  changes: Array<ChangeLogEntry>
  functions: Map<string, FunctionFields>
  links: Array<FunctionLink>
  revision: number
}

const byCode = <A extends { readonly code: string }>(a: A, b: A) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0)

/**
 * The referential's ports in memory, with the same contract as the PostgreSQL adapters: tenant
 * scoping, sorted reads, one writer at a time, and a write that fails leaves no trace.
 */
export const InMemoryReferential = Layer.unwrapEffect(
  Effect.gen(function*() {
    let tenants = new Map<string, TenantState>()
    const tenant = (tenantId: string): TenantState => {
      let state = tenants.get(tenantId)
      if (state === undefined) {
        state = { applications: new Map(), changes: [], functions: new Map(), links: [], revision: 0 }
        tenants.set(tenantId, state)
      }
      return state
    }
    const snapshot = () =>
      new Map(
        [...tenants].map(([id, s]) => [
          id,
          { applications: new Map(s.applications), changes: [...s.changes], functions: new Map(s.functions), links: [...s.links], revision: s.revision }
        ])
      )
    const writer = yield* Effect.makeSemaphore(1)

    const codesOf = (state: TenantState, functionId: string) =>
      state.links.filter((link) => link.functionId === functionId).map((link) => link.applicationCode).sort()
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
    const sortedFunctions = (state: TenantState) => [...state.functions.values()].sort(byCode)
    const countBy = (records: ReadonlyArray<ApplicationRecord>, key: "criticality" | "dataClassification" | "status") =>
      records.reduce<Record<string, number>>((acc, record) => ({ ...acc, [record[key]]: (acc[record[key]] ?? 0) + 1 }), {})

    const applications = ApplicationRepository.of({
      list: (tenantId, filters) =>
        Effect.sync(() =>
          [...tenant(tenantId).applications.values()]
            .filter((record) =>
              (filters.data_class === undefined || record.dataClassification === filters.data_class) &&
              (filters.criticality === undefined || record.criticality === filters.criticality) &&
              (filters.status === undefined || record.status === filters.status) &&
              (filters.regulation === undefined || record.regulations.includes(filters.regulation))
            )
            .sort(byCode)
        ),
      find: (tenantId, code) => Effect.sync(() => Option.fromNullable(tenant(tenantId).applications.get(code))),
      ancestorCodes: (tenantId, code) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          const codes: Array<string> = []
          let parent = state.applications.get(code)?.parentCode ?? null
          while (parent !== null) {
            codes.push(parent)
            parent = state.applications.get(parent)?.parentCode ?? null
          }
          return codes
        }),
      count: (tenantId) => Effect.sync(() => tenant(tenantId).applications.size),
      insert: (tenantId, record) => Effect.sync(() => void tenant(tenantId).applications.set(record.code, record)),
      update: (tenantId, record) => Effect.sync(() => void tenant(tenantId).applications.set(record.code, record)),
      insertMany: (tenantId, records) =>
        Effect.sync(() => {
          for (const record of records) tenant(tenantId).applications.set(record.code, record)
        }),
      appendChanges: (tenantId, entries) => Effect.sync(() => void tenant(tenantId).changes.push(...entries)),
      listChanges: (tenantId, code, limit) =>
        Effect.sync(() =>
          tenant(tenantId)
            .changes.map((entry, seq) => ({ entry, seq }))
            .filter(({ entry }) => entry.applicationCode === code)
            .sort((a, b) => b.entry.changedAt.epochMillis - a.entry.changedAt.epochMillis || b.seq - a.seq)
            .slice(0, limit)
            .map(({ entry }) => entry)
        )
    })

    const functions = FunctionRepository.of({
      listAll: (tenantId) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          return [...state.functions.values()].map((fn) => ({ ...fn, applicationCodes: codesOf(state, fn.id) }))
        }),
      listAllEnriched: (tenantId) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          return [...state.functions.values()].map((fn) => ({
            ...fn,
            applications: codesOf(state, fn.id).map((code) => {
              const app = state.applications.get(code)!
              const parent = app.parentCode === null ? undefined : state.applications.get(app.parentCode)
              return new LinkedApplication({
                code,
                name: app.name,
                parentCode: app.parentCode,
                parentName: parent?.name ?? null,
                criticality: app.criticality
              })
            })
          }))
        }),
      find: (tenantId, id) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          const fn = state.functions.get(id)
          return fn === undefined ? Option.none() : Option.some(locate(state, fn))
        }),
      findByCode: (tenantId, code) =>
        Effect.sync(() => Option.fromNullable([...tenant(tenantId).functions.values()].find((fn) => fn.code === code))),
      search: (tenantId, text) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          const needle = text.toLowerCase()
          return sortedFunctions(state)
            .filter((fn) => [fn.code, fn.name, fn.description ?? ""].some((value) => value.toLowerCase().includes(needle)))
            .map((fn) => locate(state, fn))
        }),
      listByApplication: (tenantId, applicationCode) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          return sortedFunctions(state)
            .filter((fn) => state.links.some((link) => link.functionId === fn.id && link.applicationCode === applicationCode))
            .map((fn) => locate(state, fn))
        }),
      selfAndAncestorIds: (tenantId, id) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          const ids: Array<string> = []
          let current = state.functions.get(id)
          while (current !== undefined) {
            ids.push(current.id)
            current = current.parentId === null ? undefined : state.functions.get(current.parentId)
          }
          return ids
        }),
      hasChildren: (tenantId, id) => Effect.sync(() => [...tenant(tenantId).functions.values()].some((fn) => fn.parentId === id)),
      count: (tenantId) => Effect.sync(() => tenant(tenantId).functions.size),
      insert: (tenantId, fields) => Effect.sync(() => void tenant(tenantId).functions.set(fields.id, fields)),
      update: (tenantId, fields) => Effect.sync(() => void tenant(tenantId).functions.set(fields.id, fields)),
      remove: (tenantId, id) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          state.functions.delete(id)
          state.links = state.links.filter((link) => link.functionId !== id)
        }),
      link: (tenantId, link) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          if (!state.links.some((l) => l.functionId === link.functionId && l.applicationCode === link.applicationCode)) state.links.push(link)
        }),
      unlink: (tenantId, link) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          state.links = state.links.filter((l) => !(l.functionId === link.functionId && l.applicationCode === link.applicationCode))
        }),
      insertMany: (tenantId, fns, links) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          for (const fn of fns) state.functions.set(fn.id, fn)
          state.links.push(...links)
        }),
      counts: (tenantId) =>
        Effect.sync(() => {
          const state = tenant(tenantId)
          const fns = [...state.functions.values()]
          const apps = [...state.applications.values()]
          return {
            functionCount: fns.length,
            rootFunctionCount: fns.filter((fn) => fn.parentId === null).length,
            maxDepth: fns.reduce((max, fn) => Math.max(max, pathOf(state, fn).length), 0),
            functionsWithoutApplication: fns.filter((fn) => codesOf(state, fn.id).length === 0).length,
            applicationCount: apps.length,
            applicationsWithoutFunction: apps.filter((app) => !state.links.some((link) => link.applicationCode === app.code)).length,
            linkCount: state.links.length,
            applicationsByCriticality: countBy(apps, "criticality"),
            applicationsByDataClassification: countBy(apps, "dataClassification"),
            applicationsByStatus: countBy(apps, "status")
          }
        })
    })

    const store = ReferentialStore.of({
      write: (tenantId, effect) =>
        writer.withPermits(1)(
          Effect.suspend(() => {
            const before = snapshot()
            return Effect.onExit(effect, (exit) =>
              Effect.sync(() => {
                if (Exit.isSuccess(exit)) tenant(tenantId).revision += 1
                else tenants = before
              }))
          })
        ),
      revision: (tenantId) => Effect.sync(() => tenant(tenantId).revision)
    })

    return Layer.mergeAll(
      Layer.succeed(ApplicationRepository, applications),
      Layer.succeed(FunctionRepository, functions),
      Layer.succeed(ReferentialStore, store)
    )
  })
)
