import { BusinessFunction, type FunctionTreeNode, type LinkedApplication, type PosiTreeNode, trusted } from "@portfolio/domain"
import type { FunctionFields, FunctionRecord, LocatedFunction } from "./FunctionRecord.js"

const byCode = <A extends { readonly code: string }>(a: A, b: A) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0)

/** Children of every parent (roots under `null`), each sibling list sorted by code. */
const childrenIndex = <A extends FunctionFields>(rows: ReadonlyArray<A>): Map<string | null, Array<A>> => {
  const index = new Map<string | null, Array<A>>()
  for (const row of rows) {
    const siblings = index.get(row.parentId)
    if (siblings === undefined) index.set(row.parentId, [row])
    else siblings.push(row)
  }
  for (const siblings of index.values()) siblings.sort(byCode)
  return index
}

/**
 * Builds nested nodes from the flat rows of one query. Only what hangs from a root is reachable,
 * which the storage guarantees is everything (parents exist, no cycles).
 */
const assemble = <A extends FunctionFields, N>(
  rows: ReadonlyArray<A>,
  make: (row: A, level: number, children: ReadonlyArray<N>) => N
): ReadonlyArray<N> => {
  const index = childrenIndex(rows)
  const build = (row: A, level: number): N =>
    make(row, level, (index.get(row.id) ?? []).map((child) => build(child, level + 1)))
  return (index.get(null) ?? []).map((root) => build(root, 1))
}

/** What every node says of its function, whatever the form of the tree. */
const node = (row: FunctionFields, level: number) => ({
  id: row.id,
  code: row.code,
  name: row.name,
  description: row.description,
  parentId: row.parentId,
  level,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt
})

export const functionTree = (rows: ReadonlyArray<FunctionRecord>): ReadonlyArray<FunctionTreeNode> =>
  assemble<FunctionRecord, FunctionTreeNode>(rows, (row, level, children) => ({
    ...node(row, level),
    applicationCodes: row.applicationCodes,
    children
  }))

/**
 * Posi: the tree with each linked application described as links show it. The two halves move
 * with different writes (ports/TenantRevisions.ts), so they are read apart. A link names an
 * application that exists (a foreign key, and no write deletes an application).
 */
export const posiTree = (
  tree: ReadonlyArray<FunctionTreeNode>,
  applications: ReadonlyMap<string, LinkedApplication>
): ReadonlyArray<PosiTreeNode> => {
  const describe = (code: string) => {
    const application = applications.get(code)
    if (application === undefined) throw new Error(`a function links ${code}, which is not among the applications read`)
    return application
  }
  const enrich = (at: FunctionTreeNode): PosiTreeNode => ({ ...at, applications: at.applicationCodes.map(describe), children: at.children.map(enrich) })
  return tree.map(enrich)
}

export const toBusinessFunction = (located: LocatedFunction): BusinessFunction =>
  trusted(BusinessFunction, {
    id: located.id,
    code: located.code,
    name: located.name,
    description: located.description,
    parentId: located.parentId,
    level: located.path.length,
    path: located.path,
    applicationCodes: located.applicationCodes,
    createdAt: located.createdAt,
    updatedAt: located.updatedAt
  })

/** Every function once, depth first (pre-order), siblings by code, each with its level and path. */
export const flatFunctions = (rows: ReadonlyArray<FunctionRecord>): ReadonlyArray<BusinessFunction> => {
  const index = childrenIndex(rows)
  const out: Array<BusinessFunction> = []
  const visit = (row: FunctionRecord, parentPath: ReadonlyArray<string>) => {
    const path = [...parentPath, row.code]
    out.push(toBusinessFunction({ ...row, path }))
    for (const child of index.get(row.id) ?? []) visit(child, path)
  }
  for (const root of index.get(null) ?? []) visit(root, [])
  return out
}

/**
 * The flat list's order as a comparison of paths: depth first with siblings by code is the order
 * of the paths compared code by code, a function before its descendants. A path no function has
 * any more (moved or removed since) still has its place in that order.
 */
export const comparePaths = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = byCode({ code: a[i]! }, { code: b[i]! })
    if (order !== 0) return order
  }
  return a.length - b.length
}
