import { describe, expect, it } from "@effect/vitest"
import { BusinessFunction, LinkedApplication } from "@portfolio/domain"
import type { FunctionRecord } from "../../src/domain/FunctionRecord.js"
import { DateTime } from "effect"
import { flatFunctions, functionTree, posiTree } from "../../src/domain/FunctionForest.js"

const at = DateTime.makeUnsafe(0)
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
const row = (n: number, code: string, parent: number | null, applicationCodes: ReadonlyArray<string> = []): FunctionRecord => ({
  id: id(n),
  code,
  name: `name ${code}`,
  description: null,
  parentId: parent === null ? null : id(parent),
  applicationCodes,
  createdAt: at,
  updatedAt: at
})

// Deliberately out of order: the assembly must not depend on the order of the query's rows.
const rows = [
  row(5, "B.2", 2),
  row(4, "A.1.x", 3, ["APP-2"]),
  row(2, "B", null),
  row(3, "A.1", 1, ["APP-1", "APP-2"]),
  row(6, "B.10", 2),
  row(1, "A", null)
]

describe("function forest assembly", () => {
  it("nests children under their parent, siblings by code, with levels", () => {
    const tree = functionTree(rows)
    const shape = (nodes: typeof tree): unknown => nodes.map((n) => ({ code: n.code, level: n.level, children: shape(n.children) }))
    expect(shape(tree)).toEqual([
      { code: "A", level: 1, children: [{ code: "A.1", level: 2, children: [{ code: "A.1.x", level: 3, children: [] }] }] },
      { code: "B", level: 1, children: [{ code: "B.10", level: 2, children: [] }, { code: "B.2", level: 2, children: [] }] }
    ])
    const { children: _children, ...a1 } = tree[0]!.children[0]!
    expect(a1).toEqual({
      id: id(3),
      code: "A.1",
      name: "name A.1",
      description: null,
      parentId: id(1),
      level: 2,
      applicationCodes: ["APP-1", "APP-2"],
      createdAt: at,
      updatedAt: at
    })
  })

  it("lists depth first with level and path", () => {
    const flat = flatFunctions(rows)
    expect(flat.every((fn) => fn instanceof BusinessFunction)).toBe(true)
    expect(flat.map((fn) => ({ code: fn.code, level: fn.level, path: fn.path }))).toEqual([
      { code: "A", level: 1, path: ["A"] },
      { code: "A.1", level: 2, path: ["A", "A.1"] },
      { code: "A.1.x", level: 3, path: ["A", "A.1", "A.1.x"] },
      { code: "B", level: 1, path: ["B"] },
      { code: "B.10", level: 2, path: ["B", "B.10"] },
      { code: "B.2", level: 2, path: ["B", "B.2"] }
    ])
  })

  it("keeps each function's described applications in the posi tree", () => {
    const app = (code: string) => new LinkedApplication({ code, name: `n ${code}`, parentCode: null, parentName: null, criticality: "LOW" })
    const linked = new Map(["APP-1", "APP-2", "APP-3"].map((code) => [code, app(code)]))
    const tree = posiTree(functionTree(rows), linked)
    const a1 = tree[0]!.children[0]!
    expect({ codes: a1.applicationCodes, applications: a1.applications }).toEqual({ codes: ["APP-1", "APP-2"], applications: [app("APP-1"), app("APP-2")] })
    expect(tree.map((n) => n.code)).toEqual(["A", "B"])
  })

  it("answers an empty forest with an empty list", () => {
    expect(functionTree([])).toEqual([])
    expect(flatFunctions([])).toEqual([])
  })
})
