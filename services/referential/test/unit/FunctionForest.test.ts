import { describe, expect, it } from "@effect/vitest"
import type { FunctionRecord } from "../../src/domain/FunctionRecord.js"
import { DateTime } from "effect"
import { compareCodes, comparePaths, treeWalker } from "../../src/domain/FunctionForest.js"
import { inTreeOrder } from "../support/Forests.js"

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

// Deliberately out of order: the tree order must not depend on the order the rows are given in.
const rows = [
  row(5, "B.2", 2),
  row(4, "A.1.x", 3, ["APP-2"]),
  row(2, "B", null),
  row(3, "A.1", 1, ["APP-1", "APP-2"]),
  row(6, "B.10", 2),
  row(1, "A", null)
]

describe("function forest in tree order", () => {
  it("walks depth first, siblings by code, with levels, whatever the order of the rows", () => {
    const placed = inTreeOrder(rows)
    expect(placed.map((fn) => [fn.code, fn.level])).toEqual([["A", 1], ["A.1", 2], ["A.1.x", 3], ["B", 1], ["B.10", 2], ["B.2", 2]])
    const { level, ...a1 } = placed[1]!
    expect(level).toBe(2)
    expect(a1).toEqual(rows[3])
    expect(inTreeOrder([])).toEqual([])
  })

  it("orders codes by code point, as the storage's \"C\" collation does", () => {
    // UTF-16 puts a character above U+FFFF (a surrogate pair) below U+E000 to U+FFFF; code points
    // and UTF-8 bytes put it above.
    const codes = ["\u{1F680}", "\uFF21", "\uE000", "Z", "a", "", "ab", "\u00E9", "\u{10000}"]
    const sorted = [...codes].sort(compareCodes)
    expect(sorted).toEqual([...codes].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))))
    expect(sorted).toEqual(["", "Z", "a", "ab", "\u00E9", "\uE000", "\uFF21", "\u{10000}", "\u{1F680}"])
    expect(inTreeOrder([row(1, "\u{1F680}", null), row(2, "\uFF21", null)]).map((fn) => fn.code)).toEqual(["\uFF21", "\u{1F680}"])
    expect(comparePaths(["A", "\uFF21"], ["A", "\u{1F680}"])).toBeLessThan(0)
    expect(comparePaths(["A"], ["A", "B"])).toBeLessThan(0)
    expect(comparePaths(["B"], ["A", "B"])).toBeGreaterThan(0)
  })

  it("follows a walk: what closes before each function, whether a sibling precedes it, its path", () => {
    const walker = treeWalker()
    const steps = inTreeOrder(rows).map((fn) => {
      const { afterSibling, closes, path } = walker.next(fn)
      return { code: fn.code, closes, afterSibling, path: [...path] }
    })
    expect(steps).toEqual([
      { code: "A", closes: 0, afterSibling: false, path: ["A"] },
      { code: "A.1", closes: 0, afterSibling: false, path: ["A", "A.1"] },
      { code: "A.1.x", closes: 0, afterSibling: false, path: ["A", "A.1", "A.1.x"] },
      { code: "B", closes: 3, afterSibling: true, path: ["B"] },
      { code: "B.10", closes: 0, afterSibling: false, path: ["B", "B.10"] },
      { code: "B.2", closes: 1, afterSibling: true, path: ["B", "B.2"] }
    ])
    expect(walker.end()).toBe(2)
  })

  it("refuses a walk that is no tree order", () => {
    const walker = treeWalker()
    walker.next({ code: "A", level: 1 })
    expect(() => walker.next({ code: "A.1.x", level: 3 })).toThrow("a walk of the forest met A.1.x at level 3 after level 1")
    expect(() => treeWalker().next({ code: "A.1", level: 2 })).toThrow("at level 2 after level 0")
    expect(() => treeWalker().next({ code: "A", level: 0 })).toThrow("at level 0")
  })
})
