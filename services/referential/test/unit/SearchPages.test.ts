import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { searchPageOf } from "../../src/usecases/FunctionQueries.js"

const tenantId = "6a0f4c2e-9d1b-4e57-8f3a-2b7c9e1d5a40"
// In code point order, as PostgreSQL's "C" collation sorts: U+FF21 before U+1F600, which
// JavaScript's own comparison of UTF-16 units puts first.
const codes = ["ORD-A", "ORD-a", "ORD-\uFF21", "ORD-\u{1F600}"]
const whole = Effect.succeed({ count: codes.length, codeAt: (i: number) => codes[i]!, item: (i: number) => `item ${codes[i]}` })

/** Every page of `limit`, each from the last one's cursor. */
const walked = (text: string, limit: number) =>
  Effect.gen(function*() {
    const pages: Array<ReadonlyArray<string>> = []
    let cursor: string | undefined
    do {
      const page = yield* searchPageOf(tenantId, text, { limit, ...(cursor === undefined ? {} : { cursor }) }, whole)
      pages.push(page.items)
      cursor = Option.getOrUndefined(page.next)
    } while (cursor !== undefined)
    return pages
  })

describe("a search's pages cut from its whole result", () => {
  it.effect("resume after the cursor's code in code point order, the last without a next cursor", () =>
    Effect.gen(function*() {
      expect(yield* walked("ord", 1)).toEqual(codes.map((code) => [`item ${code}`]))
      expect(yield* walked("ord", 3)).toEqual([codes.slice(0, 3).map((code) => `item ${code}`), [`item ORD-\u{1F600}`]])
      expect(yield* walked("ord", 4)).toEqual([codes.map((code) => `item ${code}`)])
    }))

  it.effect("answer an empty page for an empty result, and refuse another text's cursor before reading anything", () =>
    Effect.gen(function*() {
      expect(yield* searchPageOf(tenantId, "none", { limit: 2 }, Effect.succeed({ count: 0, codeAt: (): string => { throw new Error("no code") }, item: () => "" }))).toEqual({ items: [], next: Option.none() })
      const first = yield* searchPageOf(tenantId, "ord", { limit: 1 }, whole)
      let read = false
      const counted = Effect.sync(() => (read = true)).pipe(Effect.andThen(whole))
      const refused = yield* Effect.flip(searchPageOf(tenantId, "other", { limit: 1, cursor: Option.getOrThrow(first.next) }, counted))
      expect(refused._tag).toBe("InvalidRequest")
      expect(read).toBe(false)
    }))
})
