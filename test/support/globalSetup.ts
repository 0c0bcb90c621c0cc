import type { TestProject } from "vitest/node"
import { makeRegistry, removeRemembered } from "./sharedSystems.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's registry of shared systems (sharedSystems.ts). */
    sharedSystems: string
  }
}

/** vitest's global setup: the registry the workers' shared systems are written down in, emptied at the end of the run. */
export default function setup(project: TestProject) {
  const registry = makeRegistry()
  project.provide("sharedSystems", registry)
  return () => removeRemembered(registry)
}
