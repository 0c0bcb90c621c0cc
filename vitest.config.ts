import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["libs/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/bench/**"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // The black-box suites start real processes; keep the 2-core machine from thrashing.
    maxWorkers: 2,
    minWorkers: 1
  }
})
