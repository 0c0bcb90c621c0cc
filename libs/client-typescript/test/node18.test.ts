import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

/**
 * The floor is held twice. By types: the sources must type-check with the ES2022 and DOM libraries
 * only and without @types/node (the build's own settings), where newer APIs and Node.js modules do
 * not exist; the built files are parsed as ES2022 in build.test.ts. And by running: `npm run
 * test:sdk-node18` (part of `npm test`) runs this whole suite again on Node.js 18.20.8, the
 * registry's official binary, where build.test.ts loads the built files in a plain Node.js 18.
 */
const packageDir = fileURLToPath(new URL("../", import.meta.url))

const readConfig = () => {
  const host: ts.ParseConfigFileHost = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
    }
  }
  const config = ts.getParsedCommandLineOfConfigFile(join(packageDir, "tsconfig.json"), {}, host)
  if (config === undefined) throw new Error("no tsconfig.json")
  return config
}

const messages = (diagnostics: ReadonlyArray<ts.Diagnostic>) =>
  diagnostics.map((diagnostic) => `${diagnostic.file?.fileName ?? ""}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`)

describe("Node.js 18 and browsers", () => {
  it.runIf(process.env["SDK_NODE_FLOOR"] !== undefined)("runs on the Node.js line the package states as its floor", () => {
    expect(process.versions.node.split(".")[0]).toBe(process.env["SDK_NODE_FLOOR"])
    const engines = (JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { engines: { node: string } }).engines.node
    expect(engines).toBe(`>=${process.env["SDK_NODE_FLOOR"]}`)
  })

  it("the package's tsconfig allows ES2022 and the DOM only, without @types/node", () => {
    const { options } = readConfig()
    expect(options.lib).toEqual(["lib.es2022.d.ts", "lib.dom.d.ts"])
    expect(options.types).toEqual([])
  })

  it("the sources type-check with it", () => {
    const config = readConfig()
    expect(config.fileNames.length).toBeGreaterThanOrEqual(10)
    const program = ts.createProgram(config.fileNames, config.options)
    expect(messages([...config.errors, ...ts.getPreEmitDiagnostics(program)])).toEqual([])
  })

  it("rejects what Node.js 18 or a browser lacks: node: modules, Node.js globals, APIs after ES2022", () => {
    const probes: Record<string, string> = {
      "node-module.ts": `import { readFileSync } from "node:fs"\nexport const read = readFileSync`,
      "buffer.ts": `export const bytes = Buffer.from("x")`,
      "process.ts": `export const env = process.env`,
      "es2023.ts": `export const sorted = [3, 1, 2].toSorted()`,
      "es2024.ts": `export const groups = Object.groupBy([1, 2], (n: number) => (n % 2 === 0 ? "even" : "odd"))`
    }
    const dir = mkdtempSync(join(tmpdir(), "portfolio-client-node18-"))
    try {
      for (const [file, text] of Object.entries(probes)) writeFileSync(join(dir, file), text)
      const { options } = readConfig()
      const program = ts.createProgram(Object.keys(probes).map((file) => join(dir, file)), { ...options, rootDir: dir })
      const diagnostics = ts.getPreEmitDiagnostics(program)
      for (const file of Object.keys(probes)) {
        expect(diagnostics.some((diagnostic) => diagnostic.file?.fileName === join(dir, file)), `${file} should not type-check`).toBe(true)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("the sources import no node: module, and use none of the DOM APIs that came after Node.js 18.0", () => {
    const walk = (dir: string): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]))
    const sources = walk(join(packageDir, "src"))
    expect(sources.length).toBeGreaterThanOrEqual(10)
    for (const file of sources) {
      const text = readFileSync(file, "utf8").replace(/^\s*(\/\/|\*).*$/gm, "")
      expect(text, file).not.toMatch(/from\s+["']node:|require\(|import\(["']node:/)
      // The DOM library declares them, Node.js 18.0 lacks them.
      expect(text, file).not.toMatch(/AbortSignal\.any|URL\.canParse|Promise\.withResolvers|structuredClone/)
    }
  })
})
