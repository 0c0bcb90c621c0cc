import { BusinessFunction, type FunctionTreeNode, type LinkedApplication, type PosiTreeNode, trusted } from "@portfolio/domain"
import { Effect, Stream } from "effect"
import { compareCodes, locating, toBusinessFunction } from "../../src/domain/FunctionForest.js"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { walkFunctions, walkLocated } from "../../src/usecases/FunctionQueries.js"
import type { FunctionRecord, PlacedFunction } from "../../src/domain/FunctionRecord.js"

/**
 * The forms of a forest as nested values, made the plain way (children indexed, then nested
 * recursively): what the answers written from a walk (WireJson.ts) must equal once encoded, and
 * what the tests read trees with.
 */
const childrenOf = (records: ReadonlyArray<FunctionRecord>) => {
  const index = new Map<string | null, Array<FunctionRecord>>()
  for (const record of records) index.set(record.parentId, [...(index.get(record.parentId) ?? []), record])
  for (const siblings of index.values()) siblings.sort((a, b) => compareCodes(a.code, b.code))
  return index
}

export const nestedTree = (records: ReadonlyArray<FunctionRecord>): ReadonlyArray<FunctionTreeNode> => {
  const index = childrenOf(records)
  const build = (record: FunctionRecord, level: number): FunctionTreeNode => ({
    id: record.id,
    code: record.code,
    name: record.name,
    description: record.description,
    parentId: record.parentId,
    level,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    applicationCodes: record.applicationCodes,
    children: (index.get(record.id) ?? []).map((child) => build(child, level + 1))
  })
  return (index.get(null) ?? []).map((root) => build(root, 1))
}

export const flatList = (records: ReadonlyArray<FunctionRecord>): ReadonlyArray<BusinessFunction> => {
  const index = childrenOf(records)
  const out: Array<BusinessFunction> = []
  const visit = (record: FunctionRecord, parentPath: ReadonlyArray<string>) => {
    const path = [...parentPath, record.code]
    const { applicationCodes, createdAt, updatedAt, ...fields } = record
    out.push(trusted(BusinessFunction, { ...fields, level: path.length, path, applicationCodes, createdAt, updatedAt }))
    for (const child of index.get(record.id) ?? []) visit(child, path)
  }
  for (const root of index.get(null) ?? []) visit(root, [])
  return out
}

export const posiOf = (tree: ReadonlyArray<FunctionTreeNode>, applications: ReadonlyMap<string, LinkedApplication>): ReadonlyArray<PosiTreeNode> => {
  const enrich = (at: FunctionTreeNode): PosiTreeNode => ({
    ...at,
    applications: at.applicationCodes.map((code) => applications.get(code)!),
    children: at.children.map(enrich)
  })
  return tree.map(enrich)
}

/**
 * Every function once in tree order, each with its level: the walk the repositories give
 * (ports/FunctionRepository.ts), the plain way. Only what hangs from a root is reachable, which
 * the storage guarantees is everything (parents exist, no cycles).
 */
export const inTreeOrder = (records: ReadonlyArray<FunctionRecord>): ReadonlyArray<PlacedFunction> => {
  const index = childrenOf(records)
  const out: Array<PlacedFunction> = []
  const visit = (record: FunctionRecord, level: number) => {
    out.push({ ...record, level })
    for (const child of index.get(record.id) ?? []) visit(child, level + 1)
  }
  for (const root of index.get(null) ?? []) visit(root, 1)
  return out
}

/** The records' walk as the repository gives it, `batch` functions at a time. */
export const walkOf = (records: ReadonlyArray<FunctionRecord>, batch = 1_000): Stream.Stream<ReadonlyArray<PlacedFunction>> =>
  Stream.fromIterable(inTreeOrder(records)).pipe(Stream.grouped(batch))

/** That walk with each function's path, as the flat list is written from it. */
export const locatedWalkOf = (records: ReadonlyArray<FunctionRecord>, batch?: number) =>
  Stream.suspend(() => {
    const locate = locating()
    return Stream.map(walkOf(records, batch), (placed) => placed.map(locate))
  })

/** A walk's functions nested in the order and at the levels the walk gives them. */
export const nestWalk = (placed: ReadonlyArray<PlacedFunction>): ReadonlyArray<FunctionTreeNode> => {
  const roots: Array<FunctionTreeNode> = []
  const open: Array<{ readonly children: Array<FunctionTreeNode> }> = []
  for (const fn of placed) {
    if (fn.level > open.length + 1) throw new Error(`${fn.code} at level ${fn.level} after level ${open.length}`)
    open.length = fn.level - 1
    const node = { ...fn, children: [] as Array<FunctionTreeNode> }
    ;(open.at(-1)?.children ?? roots).push(node)
    open.push(node)
  }
  return roots
}

/** The tenant's walk, whole (the tests' forests are small). */
export const walked = (tenantId: string) => Effect.map(Stream.runCollect(walkFunctions(tenantId)), (batches) => [...batches].flat())

/** The tree as its answer shows it, nested from the walk. */
export const walkedTree = (tenantId: string) => Effect.map(walked(tenantId), nestWalk)

/** The flat list as its answer shows it, from the walk. */
export const walkedFlat = (tenantId: string) =>
  Effect.map(Stream.runCollect(walkLocated(tenantId)), (batches) => [...batches].flat().map(toBusinessFunction))

/** Posi as its answer shows it: the walk's tree with every linked application as links show it. */
export const walkedPosi = (tenantId: string) =>
  Effect.gen(function*() {
    const applications = yield* ApplicationRepository
    const listed = yield* Stream.runCollect(applications.listLinkedChanged(tenantId, [], undefined))
    const linked = new Map(listed.flatMap((batch) => batch._tag === "Linked" ? batch.applications.map(({ application }) => [application.code, application] as const) : []))
    return posiOf(yield* walkedTree(tenantId), linked)
  })
