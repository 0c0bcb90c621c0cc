import {
  ApplicationStatus,
  Criticality,
  DataClassification,
  InputText,
  NotFound,
  type PageQuery,
  PublicPageSize,
  ReferentialStats
} from "@portfolio/domain"
import { cursorAfter, cursorCodec, type Page, pageLimit, pageOf } from "@portfolio/platform"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import { FunctionRepository } from "../ports/FunctionRepository.js"
import { TenantRevisions } from "../ports/TenantRevisions.js"
import { Effect, Option, Schema } from "effect"
import type { BusinessFunction } from "@portfolio/domain"
import type { LocatedFunction } from "../domain/FunctionRecord.js"
import { comparePaths, flatFunctions, functionTree, posiTree, toBusinessFunction } from "../domain/FunctionForest.js"
import { applicationNotFound } from "./ApplicationQueries.js"

export const functionNotFound = (id: string) => new NotFound({ detail: `No business function with id '${id}'.` })

/** The tenant's revision: equal values mean nothing of its referential changed in between. */
export const referentialRevision = Effect.fn("referentialRevision")(function*(tenantId: string) {
  const revisions = yield* TenantRevisions
  return yield* revisions.current(tenantId)
})

export const getFunctionTree = Effect.fn("getFunctionTree")(function*(tenantId: string) {
  const functions = yield* FunctionRepository
  return functionTree(yield* functions.listAll(tenantId))
})

export const listFunctionsFlat = Effect.fn("listFunctionsFlat")(function*(tenantId: string) {
  const functions = yield* FunctionRepository
  return flatFunctions(yield* functions.listAll(tenantId))
})

/** The flat list is in tree order, which its paths sort in: a page resumes after the last path. */
const FlatCursor = cursorCodec("functions-flat", Schema.Array(InputText).pipe(Schema.minItems(1)))

/**
 * A page of `listFunctionsFlat`. Tree order is no column an index holds: the page is cut from the
 * forest the whole list is built from (one query), after the cursor's path, so that functions
 * written between two pages shift nothing either.
 */
export const listFunctionsFlatPage = Effect.fn("listFunctionsFlatPage")(function*(tenantId: string, query: PageQuery) {
  const scope = { tenantId }
  const after = yield* cursorAfter(FlatCursor, scope, query.cursor)
  const limit = pageLimit(PublicPageSize, query.limit)
  const all = yield* listFunctionsFlat(tenantId)
  const start = Option.match(after, {
    onNone: () => 0,
    onSome: (path) => {
      const index = all.findIndex((fn) => comparePaths(fn.path, path) > 0)
      return index === -1 ? all.length : index
    }
  })
  return pageOf(all.slice(start, start + limit + 1), limit, (last) => FlatCursor.encode(scope, last.path))
})

export const getFunctionTreePosi = Effect.fn("getFunctionTreePosi")(function*(tenantId: string) {
  const functions = yield* FunctionRepository
  return posiTree(yield* functions.listAllEnriched(tenantId))
})

export const getFunction = Effect.fn("getFunction")(function*(tenantId: string, id: string) {
  const functions = yield* FunctionRepository
  const found = yield* functions.find(tenantId, id)
  if (Option.isNone(found)) return yield* functionNotFound(id)
  return toBusinessFunction(found.value)
})

export const searchFunctions = Effect.fn("searchFunctions")(function*(tenantId: string, text: string) {
  const functions = yield* FunctionRepository
  return (yield* functions.search(tenantId, text)).map(toBusinessFunction)
})

/** Lists of functions sorted by code (codes are unique in a tenant): a page resumes after the last code. */
const SearchCursor = cursorCodec("functions-search", InputText)
const ByApplicationCursor = cursorCodec("functions-by-application", InputText)

const functionPage = (rows: ReadonlyArray<LocatedFunction>, limit: number, cursorOf: (code: string) => string): Page<BusinessFunction> => {
  const page = pageOf(rows, limit, (last) => cursorOf(last.code))
  return { items: page.items.map(toBusinessFunction), next: page.next }
}

/** A page of `searchFunctions`; the searched text is part of the list. */
export const searchFunctionsPage = Effect.fn("searchFunctionsPage")(function*(tenantId: string, text: string, query: PageQuery) {
  const scope = { tenantId, q: text }
  const after = yield* cursorAfter(SearchCursor, scope, query.cursor)
  const limit = pageLimit(PublicPageSize, query.limit)
  const functions = yield* FunctionRepository
  const rows = yield* functions.search(tenantId, text, { after, limit: limit + 1 })
  return functionPage(rows, limit, (code) => SearchCursor.encode(scope, code))
})

export const listFunctionsByApplication = Effect.fn("listFunctionsByApplication")(function*(tenantId: string, code: string) {
  const applications = yield* ApplicationRepository
  const functions = yield* FunctionRepository
  if (Option.isNone(yield* applications.find(tenantId, code))) return yield* applicationNotFound(code)
  return (yield* functions.listByApplication(tenantId, code)).map(toBusinessFunction)
})

/** A page of `listFunctionsByApplication`; a cursor of another application's list is refused. */
export const listFunctionsByApplicationPage = Effect.fn("listFunctionsByApplicationPage")(
  function*(tenantId: string, code: string, query: PageQuery) {
    const scope = { tenantId, code }
    const after = yield* cursorAfter(ByApplicationCursor, scope, query.cursor)
    const limit = pageLimit(PublicPageSize, query.limit)
    const applications = yield* ApplicationRepository
    const functions = yield* FunctionRepository
    if (Option.isNone(yield* applications.find(tenantId, code))) return yield* applicationNotFound(code)
    const rows = yield* functions.listByApplication(tenantId, code, { after, limit: limit + 1 })
    return functionPage(rows, limit, (last) => ByApplicationCursor.encode(scope, last))
  }
)

/** Every enum value appears in the breakdowns, with 0 when no application has it. */
const breakdown = (values: ReadonlyArray<string>, counts: Readonly<Record<string, number>>) =>
  Object.fromEntries(values.map((value) => [value, counts[value] ?? 0]))

export const getReferentialStats = Effect.fn("getReferentialStats")(function*(tenantId: string) {
  const functions = yield* FunctionRepository
  const counts = yield* functions.counts(tenantId)
  return new ReferentialStats({
    ...counts,
    averageApplicationsPerFunction: counts.functionCount === 0 ? 0 : Math.round((counts.linkCount / counts.functionCount) * 100) / 100,
    applicationsByCriticality: breakdown(Criticality.literals, counts.applicationsByCriticality),
    applicationsByDataClassification: breakdown(DataClassification.literals, counts.applicationsByDataClassification),
    applicationsByStatus: breakdown(ApplicationStatus.literals, counts.applicationsByStatus)
  })
})
