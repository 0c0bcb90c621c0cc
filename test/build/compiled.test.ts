import { createDatabase, type FreshDatabase } from "@portfolio/platform/testing"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { isBuiltin, SourceMap } from "node:module"
import { join, relative } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AlwaysExternal, buildAll, bundles, launcher, ServiceBundles } from "../../deploy/build/build.js"
import { BuildManifestFile, DistDir } from "../../deploy/local/compiledBuild.js"
import { CompiledEnvironment, CompiledNodeOptions, CompiledServiceEnvironment, preloadedAllocator } from "../../deploy/local/serviceProcess.js"
import { type RunningSystem, startSystem } from "../../deploy/local/system.js"
import { parseJsonOutput } from "../support/cli.js"
import { send } from "../support/http.js"
import { commandLine, environment, mappedFiles, repoRoot, rssMb, run } from "./processes.js"

/**
 * `npm run build` (deploy/build/build.ts) and what runs from it: each service with plain node,
 * the CLI, the files the sources read (README, "Build"). Times and memory are printed for the
 * record, never asserted: the machine is shared.
 */
const figures: Array<string> = []
const record = (line: string) => figures.push(line)
// Against tsx, and against the ceiling of a bare Node start: `npm run bench` (test/bench/startup.ts).
afterAll(() => console.log(`Compiled, measured on this run:\n  ${figures.join("\n  ")}`))

const cliVersion = (JSON.parse(readFileSync(join(repoRoot, "libs/cli/package.json"), "utf8")) as { version: string }).version

// `npm test` builds dist/ before the suite, and the black-box files run from it meanwhile: this
// file must not rebuild it under them, so it measures and checks a build of its own.
const scratchOut = `.build-check-${process.pid}`
const scratch = join(repoRoot, scratchOut)
beforeAll(async () => {
  const started = performance.now()
  await buildAll({ outDir: scratchOut })
  record(`npm run build from a clean output folder: ${((performance.now() - started) / 1000).toFixed(1)} s`)
}, 180_000)
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
/** Where the scratch build put what `npm run build` puts at `output` (a path under dist/). */
const built = (output: string) => join(scratch, relative(DistDir, output))

describe("npm run build", () => {
  it("writes a bundle and its source map for each service and the CLI, and the manifest the launcher checks", () => {
    for (const { code, output } of bundles) {
      expect(existsSync(built(output)), output).toBe(true)
      expect(readFileSync(built(code), "utf8"), code).toContain(`//# sourceMappingURL=`)
      expect(existsSync(built(`${code}.map`)), `${code}.map`).toBe(true)
      // What node runs: the launcher (its own test, launcher.test.ts), which loads the bundle.
      expect(readFileSync(built(output), "utf8"), output).toBe(launcher)
    }
    expect(bundles.map(({ output }) => output)).toEqual([...ServiceBundles.map((name) => `dist/${name}/main.mjs`), "dist/cli/portfolio.mjs"])
    expect(bundles.map(({ code }) => code)).toEqual([...ServiceBundles.map((name) => `dist/${name}/bundle.mjs`), "dist/cli/bundle.mjs"])
    const manifest = JSON.parse(readFileSync(join(scratch, BuildManifestFile), "utf8"))
    expect(manifest.bundles.referential.inputs).toContain("services/referential/src/main.ts")
    expect(manifest.bundles.provisioning.inputs).toContain("services/provisioning/src/domain/common-passwords.json")
  })

  it("holds every package but the optional native ones, so that it runs without node_modules", () => {
    // undici requires node:sqlite (node 22) for its SQLite cache store only, which nothing here uses.
    const loadable = (name: string) => isBuiltin(name) || AlwaysExternal.includes(name) || name === "node:sqlite"
    for (const { code: output } of bundles) {
      const code = readFileSync(built(output), "utf8")
      const loaded = [...code.matchAll(/^import [^;]*? from "([^"]+)"|\b(?:__require|import)\("([^"]+)"\)/gm)].map((match) => match[1] ?? match[2]!)
      expect({ output, outside: [...new Set(loaded)].filter((name) => !loadable(name)) }).toEqual({ output, outside: [] })
    }
  })

  it("maps the bundle's code to the TypeScript lines of the project, and only those", () => {
    const source = readFileSync(join(repoRoot, "services/referential/src/main.ts"), "utf8").split("\n")
    const call = 'runService("referential"'
    const sourceLine = source.findIndex((line) => line.includes(call))
    const bundle = readFileSync(built("dist/referential/bundle.mjs"), "utf8").split("\n")
    const bundleLine = bundle.findIndex((line) => line.includes(call))
    expect({ sourceLine: sourceLine >= 0, bundleLine: bundleLine >= 0 }).toEqual({ sourceLine: true, bundleLine: true })

    const map = JSON.parse(readFileSync(built("dist/referential/bundle.mjs.map"), "utf8"))
    const entry = new SourceMap(map).findEntry(bundleLine, bundle[bundleLine]!.indexOf(call)) as { originalSource?: string; originalLine?: number }
    expect(entry.originalSource).toMatch(/services\/referential\/src\/main\.ts$/)
    expect(entry.originalLine).toBe(sourceLine)
    expect((map.sources as Array<string>).filter((path) => path.includes("node_modules"))).toEqual([])
  })

  it("starts each bundle from node's compile cache: the first run writes it, the next one reads it back", async () => {
    for (const { output } of bundles) expect(readFileSync(built(output), "utf8"), output).toContain(`await import("./bundle.mjs")`)
    const cli = relative(repoRoot, built("dist/cli/portfolio.mjs"))
    const bundleUrl = `file://${built("dist/cli/bundle.mjs")}`
    // Where node puts the cache by default, under os.tmpdir(): NODE_COMPILE_CACHE would enable it without the launcher.
    const tmp = join(scratch, "tmp")
    mkdirSync(tmp)
    // node's own account of each module's cache (NODE_DEBUG_NATIVE=COMPILE_CACHE), for the bundle's line.
    const cacheOf = async (env: Record<string, string>) => {
      const { code, stderr, stdout } = await run(process.execPath, [cli, "--version"], { NODE_DEBUG_NATIVE: "COMPILE_CACHE", TMPDIR: tmp, ...env })
      expect({ code, version: stdout.trim() }).toEqual({ code: 0, version: cliVersion })
      const verdict = `V8 code cache for ESM ${bundleUrl} `
      return stderr.split("\n").filter((line) => line.includes(verdict)).map((line) => line.slice(line.indexOf(verdict) + verdict.length))
    }
    expect(await cacheOf({})).toEqual(["was not initialized, initializing the in-memory entry"])
    expect(readdirSync(join(tmp, "node-compile-cache"))).toHaveLength(1)
    expect(await cacheOf({})).toEqual(["was accepted, keeping the in-memory entry"])
    expect(await cacheOf({ NODE_DISABLE_COMPILE_CACHE: "1" })).toEqual([])
  })

  it("gives a CLI that prints the version of libs/cli with plain node", async () => {
    const compiled = await run(process.execPath, ["dist/cli/portfolio.mjs", "--version"])
    expect({ code: compiled.code, version: compiled.stdout.trim() }).toEqual({ code: 0, version: cliVersion })
    const sources = await run(process.execPath, ["libs/cli/bin/portfolio.mjs", "--version"])
    expect({ code: sources.code, version: sources.stdout.trim() }).toEqual({ code: 0, version: cliVersion })
    record(`portfolio --version: compiled ${compiled.ms.toFixed(0)} ms, tsx ${sources.ms.toFixed(0)} ms`)
  })
})

/** Ready time and resident memory after ready, per service, in the order the launcher starts them. */
const recordSystem = (label: string, system: RunningSystem) => {
  const each = system.processes.map(({ pid, readyMs, service }) => `${service} ready ${readyMs} ms, ${rssMb(pid).toFixed(0)} MB`)
  record(`${label} (${system.processes.length} started at once): ${each.join("; ")}`)
}

describe("the compiled services", () => {
  let database: FreshDatabase
  let system: RunningSystem
  beforeAll(async () => {
    database = await createDatabase("bb")
    system = await startSystem({ databaseUrl: database.url, compiled: true, quiet: true })
    recordSystem("compiled", system)
  }, 120_000)
  afterAll(async () => {
    await system?.stop()
    await database?.drop()
  }, 60_000)

  it("run with plain node: the bundle, source maps, no tsx and no loader", () => {
    for (const { pid, service } of system.processes) {
      expect({ service, args: commandLine(pid).slice(1) }).toEqual({ service, args: [...CompiledNodeOptions, `dist/${service}/main.mjs`] })
      expect(environment(pid).get("NODE_OPTIONS") ?? "", service).not.toMatch(/tsx|--import|--loader/)
      const expected = { ...CompiledEnvironment, ...CompiledServiceEnvironment[service], ...preloadedAllocator() }
      for (const [name, value] of Object.entries(expected)) expect(environment(pid).get(name), `${service} ${name}`).toBe(value)
      // jemalloc is the allocator where this machine has it (CI installs it), as in the image.
      const preloaded = preloadedAllocator()["LD_PRELOAD"]
      if (preloaded !== undefined) expect([...mappedFiles(pid)].some((path) => path.endsWith("/libjemalloc.so.2")), `${service} maps jemalloc`).toBe(true)
    }
  })

  it("answer /readyz on their admin ports", async () => {
    for (const url of Object.values(system.adminUrls)) expect((await send(`${url}/readyz`)).status, url).toBe(200)
  })

  it("include the console, serving its pages", async () => {
    const signIn = await send(`${system.consoleUrl}/sign-in`)
    expect({ status: signIn.status, form: signIn.text.includes('action="/console/sign-in"') }).toEqual({ status: 200, form: true })
  })

  it("serve what their sources read besides code, operated by the compiled CLI", async () => {
    expect((await send(`${system.baseUrl}/openapi.json`)).body.openapi).toMatch(/^3\.1/)
    // The reference's script is a file beside the gateway's bundle, not in it.
    const docs = await send(`${system.baseUrl}/docs`)
    const script = await send(`${new URL(system.baseUrl).origin}${/<script src="([^"]+)"/.exec(docs.text)?.[1] ?? "/missing"}`)
    expect({ status: docs.status, script: script.status, scalar: script.text.includes("@scalar/api-reference") }).toEqual({ status: 200, script: 200, scalar: true })
    expect(readFileSync(join(repoRoot, "dist/gateway/bundle.mjs"), "utf8")).not.toContain("@scalar/api-reference")

    const cli = async (args: ReadonlyArray<string>) => {
      const result = await run(process.execPath, ["dist/cli/portfolio.mjs", ...args, "--json"], { ...system.env, LOG_LEVEL: "Warn" })
      if (result.code !== 0) throw new Error(`portfolio ${args.join(" ")} exited ${result.code}\n${result.stdout}\n${result.stderr}`)
      return parseJsonOutput(result.stdout)
    }
    await cli(["tenant", "create", "compiled", "--admin-email", "admin@compiled.example"])
    const { token } = await cli(["pat", "create", "--tenant", "compiled", "--email", "admin@compiled.example", "--scope", "write"])
    expect((await send(`${system.baseUrl}/referentiel/applications`, { token })).status).toBe(200)

    const invited = await send(`${system.baseUrl}/tenant/invitations`, { method: "POST", token, body: { email: "ana@compiled.example", arbRole: "viewer" } })
    expect(invited.status, invited.text).toBe(201)
    const [mail] = await cli(["mail", "list", "--to", "ana@compiled.example"])
    const link = /https?:\/\/\S+\/accept\/[A-Za-z0-9_-]{43}/.exec(String(mail.text))?.[0]
    expect(link).toBeDefined()
    // The list of common passwords is a JSON file next to provisioning's sources.
    const refused = await send(link!, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password: "JustinBieber", confirm: "JustinBieber" }).toString()
    })
    expect({ status: refused.status, common: refused.text.includes("on a list of common passwords") }).toEqual({ status: 400, common: true })
  })
})
