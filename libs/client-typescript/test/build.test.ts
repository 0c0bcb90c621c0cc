import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { parse } from "acorn"
import ts from "typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildPackage } from "../scripts/build-package.js"

/**
 * The package as npm would install it: built into node_modules/@architecture-portfolio/client of a
 * temporary directory, then loaded by its name through the `exports` map.
 */
const packageDir = new URL("../", import.meta.url)
const manifest = JSON.parse(readFileSync(new URL("package.json", packageDir), "utf8"))
let root: string
let installed: string

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "portfolio-client-build-"))
  installed = join(root, "node_modules", "@architecture-portfolio", "client")
  mkdirSync(installed, { recursive: true })
  await buildPackage(join(installed, "dist"))
  for (const file of ["package.json", "README.md", "CHANGELOG.md"]) cpSync(new URL(file, packageDir), join(installed, file))
}, 60_000)

afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true })
})

/** The probe each module format runs: a call through a fake fetch, an error and a paginated loop. */
const probe = async (sdk: any) => {
  const requests: Array<{ url: string; method: string; headers: Record<string, string> }> = []
  const answers = [
    new Response(JSON.stringify({ functionCount: 2 }), { headers: { "content-type": "application/json", "x-ratelimit-limit": "180", "x-ratelimit-remaining": "5", "x-ratelimit-reset": "9" } }),
    new Response(JSON.stringify({ errorCode: "NOT_FOUND", status: 404 }), { status: 404, headers: { "content-type": "application/problem+json" } }),
    new Response(JSON.stringify([{ code: "A" }]), { headers: { link: '<?status=ACTIVE&limit=1&cursor=2>; rel="next"' } }),
    new Response(JSON.stringify([{ code: "B" }]))
  ]
  const fetch = async (url: string, init: { method: string; headers: Record<string, string> }) => {
    requests.push({ url, method: init.method, headers: init.headers })
    return answers.shift()!
  }
  const client = new sdk.PortfolioClient({ token: "ap_pat_built", baseUrl: "https://api.example.test/api/v1", fetch })
  const stats = await client.functions.stats().withResponse()
  const missing = await client.applications.get("NOPE").catch((error: unknown) => error)
  const codes: Array<string> = []
  for await (const app of client.applications.list({ limit: 1 })) codes.push(app.code)
  return {
    data: stats.data,
    remaining: stats.rateLimit.remaining,
    notFound: missing instanceof sdk.NotFoundError && missing instanceof sdk.ApiError && missing.errorCode === "NOT_FOUND",
    codes,
    requests,
    version: sdk.VERSION,
    operations: Object.keys(sdk.operations).length
  }
}

const expectProbe = (result: Awaited<ReturnType<typeof probe>>) => {
  expect(result).toMatchObject({ data: { functionCount: 2 }, remaining: 5, notFound: true, codes: ["A", "B"], version: manifest.version, operations: 15 })
  expect(result.requests.map((request) => `${request.method} ${request.url}`)).toEqual([
    "GET https://api.example.test/api/v1/referentiel/functions/stats",
    "GET https://api.example.test/api/v1/referentiel/applications/NOPE",
    "GET https://api.example.test/api/v1/referentiel/applications?status=ACTIVE&limit=1",
    "GET https://api.example.test/api/v1/referentiel/applications?status=ACTIVE&limit=1&cursor=2"
  ])
  expect(result.requests[0]!.headers).toMatchObject({ authorization: "Bearer ap_pat_built", "user-agent": `architecture-portfolio-typescript/${manifest.version}` })
}

describe("the built package", () => {
  it("declares ESM, CommonJS and types, and every file it names exists", () => {
    const entry = manifest.exports["."]
    expect(manifest).toMatchObject({
      name: "@architecture-portfolio/client",
      type: "module",
      main: "./dist/cjs/index.cjs",
      module: "./dist/esm/index.js",
      types: "./dist/esm/index.d.ts",
      sideEffects: false,
      engines: { node: ">=18" },
      files: expect.arrayContaining(["dist"])
    })
    expect(entry.import).toEqual({ types: "./dist/esm/index.d.ts", default: "./dist/esm/index.js" })
    expect(entry.require).toEqual({ types: "./dist/cjs/index.d.cts", default: "./dist/cjs/index.cjs" })
    expect(manifest.dependencies ?? {}).toEqual({})
    for (const file of [manifest.main, manifest.module, manifest.types, entry.import.types, entry.import.default, entry.require.types, entry.require.default]) {
      expect(existsSync(join(installed, file)), file).toBe(true)
    }
  })

  it("works when imported as ESM", async () => {
    const sdk = await import(pathToFileURL(join(installed, manifest.exports["."].import.default)).href)
    expectProbe(await probe(sdk))
  })

  it("works when required as CommonJS, through the exports map", async () => {
    const require = createRequire(join(root, "consumer.cjs"))
    expect(require.resolve("@architecture-portfolio/client")).toBe(join(installed, "dist", "cjs", "index.cjs"))
    const sdk = require("@architecture-portfolio/client")
    expect(sdk.PortfolioClient).toBeTypeOf("function")
    expectProbe(await probe(sdk))
  })

  it("keeps instanceof true across its ESM and CommonJS builds loaded side by side (the dual-package hazard)", async () => {
    const esm = await import(pathToFileURL(join(installed, manifest.exports["."].import.default)).href)
    const cjs = createRequire(join(root, "consumer.cjs"))("@architecture-portfolio/client")
    expect(cjs.ApiError).not.toBe(esm.ApiError)
    const notFound = await new cjs.PortfolioClient({
      token: "t",
      maxRetries: 0,
      fetch: async () => new Response(JSON.stringify({ errorCode: "NOT_FOUND" }), { status: 404 })
    }).applications
      .get("NOPE")
      .catch((error: unknown) => error)
    for (const name of ["NotFoundError", "ApiError", "PortfolioError"]) expect(notFound instanceof esm[name], name).toBe(true)
    for (const name of ["ConflictError", "ServerError", "NetworkError"]) expect(notFound instanceof esm[name], name).toBe(false)
    const timeout = new esm.NetworkTimeoutError("slow", 5)
    expect([timeout instanceof cjs.NetworkTimeoutError, timeout instanceof cjs.NetworkError, timeout instanceof cjs.ApiError]).toEqual([true, true, false])
    expect([new Error("x") instanceof cjs.PortfolioError, (null as unknown) instanceof cjs.ApiError, ({}) instanceof cjs.ApiError]).toEqual([false, false, false])
    // A caller's subclass keeps the ordinary rule.
    const NotFound: new (...args: Array<unknown>) => object = esm.NotFoundError
    class Mine extends NotFound {}
    expect([notFound instanceof Mine, new Mine(404, new Headers(), null) instanceof cjs.NotFoundError]).toEqual([false, true])
  })

  it("resolves by its name as ESM in a plain Node.js process", () => {
    const script = `import * as sdk from "@architecture-portfolio/client"
const url = import.meta.resolve("@architecture-portfolio/client")
const client = new sdk.PortfolioClient({ token: "t", fetch: async (url) => new Response(JSON.stringify({ url })) })
console.log(JSON.stringify({ url, answer: await client.functions.stats(), names: Object.keys(sdk).sort() }))`
    const output = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" }))
    expect(output.url).toBe(pathToFileURL(join(installed, "dist", "esm", "index.js")).href)
    expect(output.answer).toEqual({ url: "http://localhost:8080/api/v1/referentiel/functions/stats" })
    expect(output.names).toEqual(expect.arrayContaining(["PortfolioClient", "ApiError", "NetworkTimeoutError", "operations", "VERSION"]))
  })

  it("parses as ES2022 in both formats, and imports nothing", () => {
    for (const [file, sourceType] of [
      ["dist/esm/index.js", "module"],
      ["dist/cjs/index.cjs", "script"]
    ] as const) {
      const code = readFileSync(join(installed, file), "utf8")
      const program = parse(code, { ecmaVersion: 2022, sourceType })
      expect(program.body.length, file).toBeGreaterThan(10)
      expect(program.body.some((node) => node.type === "ImportDeclaration"), file).toBe(false)
      expect(code, file).not.toMatch(/\brequire\(|\bimport\(|from\s*["']/)
    }
  })

  it("is parsed by a parser that really stops at ES2022", () => {
    expect(() => parse("const pattern = /[\\p{L}--[a-z]]/v", { ecmaVersion: 2022, sourceType: "module" })).toThrow()
    expect(() => parse("const pattern = /[\\p{L}--[a-z]]/v", { ecmaVersion: 2024, sourceType: "module" })).not.toThrow()
  })

  it("type-checks a consumer of each kind, ESM and CommonJS, from its declarations alone", () => {
    writeFileSync(
      join(root, "consumer.mts"),
      `import { PortfolioClient, NotFoundError, type Application, type ApiResponse } from "@architecture-portfolio/client"
const client = new PortfolioClient({ token: "t", timeout: 5_000 })
export const first: Promise<Array<Application>> = client.applications.list({ status: "RETIRED" })
export const answer: Promise<ApiResponse<Application>> = client.applications.get("A").withResponse()
export const isMissing = (error: unknown) => error instanceof NotFoundError && error.errorCode === "NOT_FOUND"
export async function codes() { const all: Array<string> = []; for await (const app of client.applications.list()) all.push(app.code); return all }
`
    )
    writeFileSync(
      join(root, "consumer.cts"),
      `import sdk = require("@architecture-portfolio/client")
const client = new sdk.PortfolioClient({ token: "t" })
export const invitation: Promise<sdk.Invitation> = client.invitations.create({ email: "a@b.example", arbRole: "viewer" })
export const revoked: Promise<void> = client.invitations.revoke("id")
`
    )
    writeFileSync(join(root, "wrong.mts"), `import { PortfolioClient } from "@architecture-portfolio/client"\nnew PortfolioClient({ token: "t" }).applications.list({ status: "GONE" })\n`)
    const options: ts.CompilerOptions = {
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      types: [],
      strict: true,
      noEmit: true
    }
    const program = ts.createProgram([join(root, "consumer.mts"), join(root, "consumer.cts"), join(root, "wrong.mts")], options)
    const diagnostics = ts.getPreEmitDiagnostics(program)
    const messages = (file: string) =>
      diagnostics.filter((diagnostic) => diagnostic.file?.fileName.endsWith(file)).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
    expect(messages("consumer.mts")).toEqual([])
    expect(messages("consumer.cts")).toEqual([])
    expect(messages("wrong.mts").join("\n")).toMatch(/"GONE"/)
    expect(diagnostics.filter((diagnostic) => !/consumer|wrong/.test(diagnostic.file?.fileName ?? ""))).toEqual([])
    const loaded = program.getSourceFiles().map((file) => file.fileName)
    expect(loaded).toContain(join(installed, "dist", "esm", "index.d.ts"))
    expect(loaded).toContain(join(installed, "dist", "cjs", "index.d.cts"))
  })
})
