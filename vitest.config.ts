import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["libs/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/bench/**"],
    // A hang still fails, two minutes later; a slow CLI process or start under load does not.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Three files at a time on 2 cores: with two, the suite kept the cores 1.3 busy on average, the
    // black-box files spending much of their time waiting (webhook retry schedules, rate-limit
    // windows, processes starting); a third keeps them busy without the thrashing of more.
    maxWorkers: 3,
    minWorkers: 1
  }
})
