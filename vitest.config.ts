import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["libs/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/bench/**"],
    // Black-box cases run the `portfolio` CLI as a child process from its sources (tsx): 2-4 s on an
    // idle machine, above 15 s while the other worker's suite starts its processes on 2 cores. A hang
    // still fails, two minutes later.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The black-box suites start real processes; keep the 2-core machine from thrashing.
    maxWorkers: 2,
    minWorkers: 1
  }
})
