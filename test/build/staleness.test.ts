import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { assertFreshBundles, type BuildManifest, BuildManifestFile, checkBundle } from "../../deploy/local/compiledBuild.js"
import { spawnService } from "../../deploy/local/serviceProcess.js"

/**
 * A missing or stale build is refused before a process starts (README, "Build"), checked on a
 * repository of its own so that no real source is touched.
 */
let root: string
const builtAt = Date.parse("2026-01-01T00:00:00Z")

const file = (path: string, modified: number) => {
  mkdirSync(join(root, path, ".."), { recursive: true })
  writeFileSync(join(root, path), "")
  utimesSync(join(root, path), modified / 1000, modified / 1000)
}

const writeManifest = (inputs: ReadonlyArray<string>) => {
  const manifest: BuildManifest = { startedAt: builtAt, bundles: { referential: { output: "dist/referential/main.mjs", inputs } } }
  mkdirSync(join(root, "dist"), { recursive: true })
  writeFileSync(join(root, "dist", BuildManifestFile), JSON.stringify(manifest))
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "portfolio-build-"))
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

describe("a compiled bundle", () => {
  it("runs when no input changed since the build started", () => {
    file("services/referential/src/main.ts", builtAt - 60_000)
    file("dist/referential/main.mjs", builtAt + 1_000)
    writeManifest(["services/referential/src/main.ts"])
    expect(checkBundle(root, "referential")).toEqual({ path: "dist/referential/main.mjs" })
  })

  it("is refused without a build, naming the command to run", () => {
    expect(checkBundle(root, "referential")).toEqual({ error: "dist/build-manifest.json is missing: run `npm run build` first" })
    expect(() => spawnService({ name: "referential", cwd: root, env: {}, onLine: () => {}, compiled: true })).toThrow(
      "cannot run the compiled referential: dist/build-manifest.json is missing: run `npm run build` first"
    )
  })

  it("is refused when its output or its entry in the manifest is gone", () => {
    writeManifest([])
    expect(checkBundle(root, "referential")).toEqual({ error: "dist/referential/main.mjs is missing: run `npm run build` first" })
    expect(checkBundle(root, "gateway")).toEqual({ error: "dist/ has no bundle of gateway: run `npm run build` first" })
  })

  it("is refused when a source it was built from changed, or was deleted, after the build started", () => {
    file("dist/referential/main.mjs", builtAt + 1_000)
    file("services/referential/src/main.ts", builtAt - 60_000)
    // Edited while the build ran: the bundle may hold the older text, although it is newer.
    file("libs/platform/src/http/Server.ts", builtAt + 500)
    writeManifest(["libs/platform/src/Gone.ts", "libs/platform/src/http/Server.ts", "services/referential/src/main.ts"])
    expect(checkBundle(root, "referential")).toEqual({
      error: "dist/referential/main.mjs is older than its sources (libs/platform/src/Gone.ts, libs/platform/src/http/Server.ts changed since the build): run `npm run build` first"
    })
    expect(() => assertFreshBundles(root, ["referential", "gateway"])).toThrow(
      /^the compiled build cannot be run:\n {2}referential: .*older than its sources.*\n {2}gateway: dist\/ has no bundle of gateway/
    )
  })
})
