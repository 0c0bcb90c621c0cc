import { afterAll, beforeAll } from "vitest"
import { Harness } from "./system.js"

/**
 * Starts the real system once for the calling test file (fresh database, free ports) and stops it
 * afterwards. `env` is extra configuration for every service, e.g. RATE_LIMIT_PER_MINUTE.
 */
export const useSystem = (env: Record<string, string> = {}): Harness => {
  const harness = new Harness()
  beforeAll(() => harness.start(env), 120_000)
  afterAll(() => harness.stop(), 60_000)
  return harness
}
