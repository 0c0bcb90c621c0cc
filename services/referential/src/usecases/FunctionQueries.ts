import { ApplicationStatus, Criticality, DataClassification, NotFound, ReferentialStats } from "@portfolio/domain"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import { FunctionRepository } from "../ports/FunctionRepository.js"
import { TenantRevisions } from "../ports/TenantRevisions.js"
import { Effect, Option } from "effect"
import { flatFunctions, functionTree, posiTree, toBusinessFunction } from "../domain/FunctionForest.js"
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

export const listFunctionsByApplication = Effect.fn("listFunctionsByApplication")(function*(tenantId: string, code: string) {
  const applications = yield* ApplicationRepository
  const functions = yield* FunctionRepository
  if (Option.isNone(yield* applications.find(tenantId, code))) return yield* applicationNotFound(code)
  return (yield* functions.listByApplication(tenantId, code)).map(toBusinessFunction)
})

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
