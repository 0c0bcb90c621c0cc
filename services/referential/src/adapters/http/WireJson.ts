import type { Application, BusinessFunction, FunctionTreeNode, LinkedApplication, PosiTreeNode } from "@portfolio/domain"
import { DateTime } from "effect"

/**
 * The JSON of the whole-tenant answers (the application list, the function tree, the flat list,
 * posi), made without the schemas: exactly the bytes of `JSON.stringify(Schema.encodeSync(S)(value))`
 * for their schemas in libs/domain, which test/unit/WireJson.test.ts checks on generated
 * referentials and on edge values. Each value is copied into a plain object with the schema's keys
 * in the schema's order and its encoded values (times as ISO strings), then the whole answer goes
 * through one JSON.stringify, which escapes every string as the schema path does. The schema's
 * encoding walks every node through its transformations and cost more than reading the forest
 * (measured at 25,000 functions: 340 ms for the tree, 580 for posi, against 60 and 100 for
 * JSON.stringify alone).
 */
const iso = (value: DateTime.Utc) => DateTime.formatIso(value)

/** The fields every form of a tree node starts with, in the schemas' order. */
const nodeHead = (node: Omit<FunctionTreeNode, "children">) => ({
  id: node.id,
  code: node.code,
  name: node.name,
  description: node.description,
  parentId: node.parentId,
  level: node.level,
  applicationCodes: node.applicationCodes,
  createdAt: iso(node.createdAt),
  updatedAt: iso(node.updatedAt)
})

const treeNode = (node: FunctionTreeNode): unknown => ({ ...nodeHead(node), children: node.children.map(treeNode) })

const linkedApplication = (application: LinkedApplication) => ({
  code: application.code,
  name: application.name,
  parentCode: application.parentCode,
  parentName: application.parentName,
  criticality: application.criticality
})

const businessFunction = (fn: BusinessFunction) => ({
  id: fn.id,
  code: fn.code,
  name: fn.name,
  description: fn.description,
  parentId: fn.parentId,
  level: fn.level,
  path: fn.path,
  applicationCodes: fn.applicationCodes,
  createdAt: iso(fn.createdAt),
  updatedAt: iso(fn.updatedAt)
})

const application = (app: Application) => ({
  code: app.code,
  name: app.name,
  description: app.description,
  parentCode: app.parentCode,
  status: app.status,
  dataClassification: app.dataClassification,
  criticality: app.criticality,
  rtoHours: app.rtoHours,
  rpoHours: app.rpoHours,
  regulations: app.regulations,
  roleAssignments: app.roleAssignments,
  licenseCost: app.licenseCost,
  supportCost: app.supportCost,
  infraCost: app.infraCost,
  staffCost: app.staffCost,
  annualCost: app.annualCost,
  applicationVip: app.applicationVip,
  contactIT: app.contactIT,
  contactMetier: app.contactMetier,
  createdAt: iso(app.createdAt),
  updatedAt: iso(app.updatedAt)
})

/**
 * The JSON array of `items` in UTF-8, made a slice at a time: each slice's plain objects and text
 * are garbage once its bytes are out, so that the heap never holds the whole answer as objects and
 * as one string at once (13 MB for posi at 25,000 functions, beside its forest), which made the
 * capped heap collect in full again and again. The bytes are those of one JSON.stringify of the
 * whole array: "[", the elements separated by ",", "]".
 */
const jsonArray = <A>(items: ReadonlyArray<A>, plain: (item: A) => unknown, perSlice: number): Uint8Array => {
  const pieces: Array<Uint8Array> = [Open]
  for (let start = 0; start < items.length; start += perSlice) {
    if (start > 0) pieces.push(Comma)
    const slice = JSON.stringify(items.slice(start, start + perSlice).map(plain))
    pieces.push(Buffer.from(slice.slice(1, -1)))
  }
  pieces.push(Close)
  return Buffer.concat(pieces)
}
const Open = Buffer.from("[")
const Comma = Buffer.from(",")
const Close = Buffer.from("]")

/** Elements per slice of the flat lists: a few hundred KB of text each. */
const ListSlice = 1_000

/** A tree goes a root (and all below it) at a time. */
export const treeJson = (roots: ReadonlyArray<FunctionTreeNode>) => jsonArray(roots, treeNode, 1)
export const posiJson = (roots: ReadonlyArray<PosiTreeNode>) => {
  // One plain copy per linked application, however many functions link it.
  const copies = new Map<LinkedApplication, unknown>()
  const copyOf = (application: LinkedApplication) => {
    let copy = copies.get(application)
    if (copy === undefined) copies.set(application, copy = linkedApplication(application))
    return copy
  }
  const node = (at: PosiTreeNode): unknown => ({ ...nodeHead(at), applications: at.applications.map(copyOf), children: at.children.map(node) })
  return jsonArray(roots, node, 1)
}
export const flatJson = (functions: ReadonlyArray<BusinessFunction>) => jsonArray(functions, businessFunction, ListSlice)
export const applicationsJson = (applications: ReadonlyArray<Application>) => jsonArray(applications, application, ListSlice)
