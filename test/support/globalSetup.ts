import { rmSync } from "node:fs"
import type { TestProject } from "vitest/node"
import { makeRegistry, removeRemembered } from "./sharedSystems.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's registry of shared systems (sharedSystems.ts). */
    sharedSystems: string
  }
}

/**
 * vitest's global setup: the registry the workers' shared systems are written down in, emptied at
 * each rerun of watch mode (the workers of the run before are gone, their systems left; a worker
 * that is not finds its system unready, and starts another) and removed at the end.
 */
export default function setup(project: TestProject) {
  const registry = makeRegistry()
  project.provide("sharedSystems", registry)
  project.onTestsRerun(() => removeRemembered(registry))
  return async () => {
    await removeRemembered(registry)
    rmSync(registry, { recursive: true, force: true })
  }
}
