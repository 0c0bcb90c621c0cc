import { describe, expect, it } from "vitest"
import { memoized } from "../../src/cache/Memoized.js"

describe("memoized", () => {
  it("computes a key once, undefined results included, and starts over past its bound", () => {
    const computed: Array<string> = []
    const lengthOf = memoized((key: string) => {
      computed.push(key)
      return key === "none" ? undefined : key.length
    }, 3)
    expect([lengthOf("a"), lengthOf("bb"), lengthOf("a"), lengthOf("none"), lengthOf("none")]).toEqual([1, 2, 1, undefined, undefined])
    expect(computed).toEqual(["a", "bb", "none"])
    // A fourth key: the three known ones are forgotten, so "a" is computed again.
    expect(lengthOf("dddd")).toBe(4)
    expect(lengthOf("a")).toBe(1)
    expect(computed).toEqual(["a", "bb", "none", "dddd", "a"])
  })
})
