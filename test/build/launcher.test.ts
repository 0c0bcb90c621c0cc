import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect, it } from "vitest"
import { launcher } from "../../deploy/build/build.js"
import { CompiledNodeOptions } from "../../deploy/local/serviceProcess.js"

/**
 * The launcher each bundle is started by (deploy/build/build.ts), with a bundle of three lines and a
 * source map naming `original.ts` for them: a stack formatted while the bundle loads (Effect's
 * probe of how frames are named) is plain, so that no source map is parsed before serving; every
 * stack read after the load is in the sources' lines, those captured during it included.
 */
const dir = mkdtempSync(join(tmpdir(), "portfolio-launcher-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it("formats stacks plainly while the bundle loads, and source-mapped from then on", () => {
  writeFileSync(join(dir, "main.mjs"), launcher)
  writeFileSync(
    join(dir, "bundle.mjs"),
    [
      `globalThis.probe = new Error("probe").stack; export const captured = new Error("captured");`,
      `setTimeout(() => process.stdout.write(JSON.stringify({ probe: globalThis.probe, captured: captured.stack, later: new Error("later").stack, restored: Error.prepareStackTrace?.name })), 0);`,
      `//# sourceMappingURL=bundle.mjs.map`
    ].join("\n")
  )
  writeFileSync(join(dir, "bundle.mjs.map"), JSON.stringify({ version: 3, file: "bundle.mjs", sources: ["original.ts"], names: [], mappings: "AAAA;AACA" }))
  const seen = JSON.parse(execFileSync(process.execPath, [...CompiledNodeOptions, join(dir, "main.mjs")], { encoding: "utf8", env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: "1" } }))
  expect(seen.probe).toContain("bundle.mjs:1:")
  expect(seen.probe).not.toContain("original.ts")
  expect(seen.captured).toContain("original.ts:1:")
  expect(seen.later).toContain("original.ts:2:")
  expect(seen.restored).toBe("ErrorPrepareStackTrace")
})

it("turns V8's allocation-site pretenuring off before the bundle loads", () => {
  const workload = join(dir, "pretenuring")
  mkdirSync(workload, { recursive: true })
  writeFileSync(join(workload, "main.mjs"), launcher)
  // One site whose objects outlive their first young collections: V8 marks it for tenuring (with its
  // default young generation; the decisions are printed with the statistics).
  writeFileSync(
    join(workload, "bundle.mjs"),
    [
      `const ring = new Array(200_000);`,
      `const make = (i) => ({ a: i, b: [i, i + 1] });`,
      `for (let i = 0; i < 6_000_000; i++) ring[i % 200_000] = make(i);`
    ].join("\n")
  )
  const trace = (entry: string) =>
    execFileSync(process.execPath, ["--trace-pretenuring-statistics", join(workload, entry)], {
      encoding: "utf8",
      env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: "1" }
    }).split("\n").filter((line) => line.includes("pretenuring:"))
  // Started without the launcher, the same code has its sites considered and tenured.
  expect(trace("bundle.mjs").filter((line) => /=> (maybe )?tenure/.test(line)).length).toBeGreaterThan(0)
  expect(trace("main.mjs")).toEqual([])
})
