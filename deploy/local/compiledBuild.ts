import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

/**
 * What `npm run build` (deploy/build/build.ts) leaves in `dist/` and what the launcher checks
 * before it runs a compiled service: a stale bundle must never be started, measured or tested in
 * place of the sources.
 */
export const DistDir = "dist"
export const BuildManifestFile = "build-manifest.json"

export interface BuildManifest {
  /** When the build started (ms since the epoch): an input changed after it may not be in the bundle. */
  readonly startedAt: number
  /** Per bundle (`gateway`, ..., `cli`): its output and the repository files it was built from. */
  readonly bundles: Readonly<Record<string, { readonly output: string; readonly inputs: ReadonlyArray<string> }>>
}

export const serviceBundle = (name: string) => `${DistDir}/${name}/main.mjs`

const readManifest = (root: string): BuildManifest | undefined => {
  const file = join(root, DistDir, BuildManifestFile)
  if (!existsSync(file)) return undefined
  try {
    return JSON.parse(readFileSync(file, "utf8")) as BuildManifest
  } catch {
    return undefined
  }
}

const modifiedAfter = (root: string, path: string, instant: number): boolean => {
  try {
    return statSync(join(root, path)).mtimeMs > instant
  } catch {
    return true // gone since the build: the bundle holds code the sources no longer have
  }
}

/**
 * The path (relative to `root`) of bundle `name`, or an error saying why it cannot be run. The
 * inputs are those esbuild read (sources, JSON, the lock file for the bundled packages, the build
 * script), not every file under libs/ and services/: a test or a benchmark edited since the build
 * does not make it stale, a package.json read for its version does.
 */
export const checkBundle = (root: string, name: string): { readonly path: string } | { readonly error: string } => {
  const rebuild = "run `npm run build` first"
  const manifest = readManifest(root)
  if (manifest === undefined) return { error: `${DistDir}/${BuildManifestFile} is missing: ${rebuild}` }
  const bundle = manifest.bundles[name]
  if (bundle === undefined) return { error: `${DistDir}/ has no bundle of ${name}: ${rebuild}` }
  if (!existsSync(join(root, bundle.output))) return { error: `${bundle.output} is missing: ${rebuild}` }
  const changed = bundle.inputs.filter((input) => modifiedAfter(root, input, manifest.startedAt))
  if (changed.length > 0) {
    const shown = changed.slice(0, 5).join(", ") + (changed.length > 5 ? ` and ${changed.length - 5} more` : "")
    return { error: `${bundle.output} is older than its sources (${shown} changed since the build): ${rebuild}` }
  }
  return { path: bundle.output }
}

/** `checkBundle` for every name, throwing one error that names every bundle that cannot be run. */
export const assertFreshBundles = (root: string, names: ReadonlyArray<string>): void => {
  const errors = names.flatMap((name) => {
    const checked = checkBundle(root, name)
    return "error" in checked ? [`${name}: ${checked.error}`] : []
  })
  if (errors.length > 0) throw new Error(`the compiled build cannot be run:\n  ${errors.join("\n  ")}`)
}
