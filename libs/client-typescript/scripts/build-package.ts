import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { build, type BuildOptions } from "esbuild"
import ts from "typescript"

const packageDir = fileURLToPath(new URL("..", import.meta.url))

/** Node.js 18 and ES2022 engines (browsers of 2022 on) are the floor of the package. */
export const targets = ["es2022", "node18"]

/**
 * Builds the package into `distDir`: `esm/index.js` (ESM) and `cjs/index.cjs` (CommonJS), each one
 * bundle of the sources with no dependency, and the declarations beside them (`.d.ts` for import,
 * `.d.cts` for require, so that TypeScript reads each kind with its own module rules).
 */
export const buildPackage = async (distDir: string = join(packageDir, "dist")): Promise<void> => {
  rmSync(distDir, { recursive: true, force: true })
  const esmDir = join(distDir, "esm")
  const cjsDir = join(distDir, "cjs")
  const common: BuildOptions = {
    entryPoints: [join(packageDir, "src/index.ts")],
    bundle: true,
    platform: "neutral",
    target: targets,
    sourcemap: true,
    logLevel: "silent"
  }
  await build({ ...common, format: "esm", outfile: join(esmDir, "index.js") })
  await build({ ...common, format: "cjs", outfile: join(cjsDir, "index.cjs") })
  emitDeclarations(esmDir)
  for (const file of walk(esmDir).filter((name) => name.endsWith(".d.ts"))) {
    const target = join(cjsDir, relative(esmDir, file)).replace(/\.d\.ts$/, ".d.cts")
    mkdirSync(join(target, ".."), { recursive: true })
    writeFileSync(target, readFileSync(file, "utf8").replace(/((?:from|import)\s*\(?\s*)(["'])(\.{1,2}\/[^"']+)\.js\2/g, "$1$2$3.cjs$2"))
  }
}

/** Emits the declarations with the package's tsconfig (ES2022 + DOM, no @types/node); any type error fails the build. */
const emitDeclarations = (outDir: string) => {
  const host: ts.ParseConfigFileHost = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"))
    }
  }
  const config = ts.getParsedCommandLineOfConfigFile(
    join(packageDir, "tsconfig.json"),
    { noEmit: false, declaration: true, emitDeclarationOnly: true, outDir },
    host
  )
  if (config === undefined) throw new Error("tsconfig.json could not be read")
  const program = ts.createProgram(config.fileNames, config.options)
  const emitted = program.emit()
  const diagnostics = [...config.errors, ...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics]
  if (diagnostics.length > 0) {
    throw new Error(ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (name) => name, getCurrentDirectory: () => packageDir, getNewLine: () => "\n" }))
  }
}

const walk = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]))
