import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { EncodedReadCache } from "../../src/adapters/http/EncodedReadCache.js"
import { fragmentMaking } from "../../src/adapters/http/Fragments.js"

const cacheOf = (budgetBytes: number) =>
  Effect.runSync(Effect.provide(Effect.gen(function*() {
    return yield* EncodedReadCache
  }), EncodedReadCache.fixed(budgetBytes)))
const bytes = (text: string) => new TextEncoder().encode(text)
const text = (json: Uint8Array | undefined) => json === undefined ? undefined : new TextDecoder().decode(json)
/** A making that finds `codes` at `version`: made when not held. */
const make = (cache: ReturnType<typeof cacheOf>, codes: ReadonlyArray<string>, version: number, label: string) => {
  const making = fragmentMaking(cache, "t", "list")
  for (const code of codes) if (!making.held(code, version)) making.made(code, version, bytes(`${code}@${version}:${label}`))
  return making
}
const keptTexts = (cache: ReturnType<typeof cacheOf>) =>
  Object.fromEntries([...cache.fragments("t", "list")?.byCode ?? []].map(([code, fragment]) => [code, text(fragment.json)]))

describe("fragment makings", () => {
  it("use a kept fragment only at the version asked, and make the others", () => {
    const cache = cacheOf(1024 * 1024)
    make(cache, ["A", "B"], 1, "first").keep([{ code: "A", version: 1 }, { code: "B", version: 1 }], true)
    const second = fragmentMaking(cache, "t", "list")
    expect(second.holding).toBe(true)
    expect(second.held("A", 1)).toBe(true)
    expect(second.held("A", 2)).toBe(false)
    expect(text(second.json("A", 1))).toBe("A@1:first")
    expect(second.json("A", 2)).toBeUndefined()
    second.made("A", 2, bytes("A@2:second"))
    expect(text(second.json("A", 2))).toBe("A@2:second")
    second.keep([{ code: "A", version: 2 }, { code: "B", version: 1 }], true)
    expect(keptTexts(cache)).toEqual({ A: "A@2:second", B: "B@1:first" })
    // Counted with what each costs beside its JSON.
    expect(cache.fragments("t", "list")!.bytes).toBe("A@2:second".length + "B@1:first".length + 2 * 220)
  })

  it("read the snapshot kept when they started, whatever another making keeps meanwhile", () => {
    const cache = cacheOf(1024 * 1024)
    make(cache, ["A"], 1, "first").keep([{ code: "A", version: 1 }], true)
    const slow = fragmentMaking(cache, "t", "list")
    make(cache, ["A"], 2, "fast").keep([{ code: "A", version: 2 }], true)
    expect(text(slow.json("A", 1))).toBe("A@1:first")
    expect(keptTexts(cache)).toEqual({ A: "A@2:fast" })
  })

  it("let go of the applications not listed when every one was, and keep them after a filtered list", () => {
    const cache = cacheOf(1024 * 1024)
    make(cache, ["A", "B", "C"], 1, "all").keep(["A", "B", "C"].map((code) => ({ code, version: 1 })), true)
    make(cache, ["B"], 2, "filtered").keep([{ code: "B", version: 2 }], false)
    expect(keptTexts(cache)).toEqual({ A: "A@1:all", B: "B@2:filtered", C: "C@1:all" })
    // C deleted: the next whole list does not name it.
    fragmentMaking(cache, "t", "list").keep([{ code: "A", version: 1 }, { code: "B", version: 2 }], true)
    expect(keptTexts(cache)).toEqual({ A: "A@1:all", B: "B@2:filtered" })
  })

  it("keep nothing new when a listed application was neither made nor held", () => {
    const cache = cacheOf(1024 * 1024)
    make(cache, ["A"], 1, "first").keep([{ code: "A", version: 1 }], true)
    make(cache, ["B"], 1, "second").keep([{ code: "A", version: 1 }, { code: "B", version: 1 }, { code: "C", version: 1 }], true)
    expect(keptTexts(cache)).toEqual({ A: "A@1:first" })
  })

  it("keep those kept with the ones that moved since, at the write sequence given, and nothing when one moved was not made", () => {
    const cache = cacheOf(1024 * 1024)
    make(cache, ["A", "B", "C"], 1, "all").keep(["A", "B", "C"].map((code) => ({ code, version: 1 })), true, 7)
    expect(cache.fragments("t", "list")!.writeSeq).toBe(7)
    const moved = make(cache, ["B"], 2, "moved")
    // Held at their versions, kept fragments are their own code and JSON.
    expect([...moved.kept.values()].map((fragment) => fragment.code)).toEqual(["A", "B", "C"])
    moved.keepMoved([{ code: "B", version: 2 }], 9)
    expect(keptTexts(cache)).toEqual({ A: "A@1:all", B: "B@2:moved", C: "C@1:all" })
    expect(cache.fragments("t", "list")!.writeSeq).toBe(9)
    fragmentMaking(cache, "t", "list").keepMoved([{ code: "C", version: 3 }], 11)
    expect(cache.fragments("t", "list")!.writeSeq).toBe(9)
  })

  it("keep nothing beyond the cache's share for fragments, and let go of what was kept", () => {
    const cache = cacheOf(4 * 1024)
    make(cache, ["A"], 1, "small").keep([{ code: "A", version: 1 }], true)
    expect(keptTexts(cache)).toEqual({ A: "A@1:small" })
    const large = fragmentMaking(cache, "t", "list")
    large.made("A", 2, new Uint8Array(2 * 1024))
    large.keep([{ code: "A", version: 2 }], true)
    expect(cache.fragments("t", "list")).toBeUndefined()
  })
})
