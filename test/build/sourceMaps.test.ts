import { SourceMap } from "node:module"
import { describe, expect, it } from "vitest"
import { keepSources, type SourceMapV3 } from "../../deploy/build/sourceMaps.js"

/** The bundles' source maps keep the project's sources only (deploy/build/sourceMaps.ts). */
describe("keepSources", () => {
  // Line 0 from a.ts (named `kept`), line 1 from a package, line 2 from a.ts again, line 3 from b.ts.
  const map: SourceMapV3 = {
    version: 3,
    sources: ["../../libs/a.ts", "../../node_modules/x/index.js", "../../libs/b.ts"],
    names: ["unused", "kept"],
    mappings: "AAAAC;ACAA,IAAI;ADCA;AEAA"
  }
  const kept = keepSources(map, (source) => !source.includes("node_modules/"))

  it("drops the refused sources, their names and their mappings, marking where their code starts", () => {
    expect(kept).toEqual({ version: 3, sources: ["../../libs/a.ts", "../../libs/b.ts"], names: ["kept"], mappings: "AAAAA;A;AACI;ACAA" })
  })

  it("maps the kept code as before, and the refused code to nothing instead of to the code above it", () => {
    const before = new SourceMap(map as any)
    const after = new SourceMap(kept as any)
    for (const [line, column] of [[0, 3], [2, 0], [2, 9], [3, 1]] as const) expect(after.findEntry(line, column)).toEqual(before.findEntry(line, column))
    expect(after.findEntry(2, 0)).toMatchObject({ originalSource: expect.stringMatching(/libs\/a\.ts$/), originalLine: 1 })
    for (const column of [0, 4, 8]) expect((after.findEntry(1, column) as { originalSource?: string }).originalSource).toBeUndefined()
  })
})
