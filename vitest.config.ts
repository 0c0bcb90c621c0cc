import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["libs/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/bench/**"],
    // A hang still fails, two minutes later; a slow CLI process or start under load does not.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Four files at a time on 2 cores: the black-box files spend much of their time waiting (webhook
    // retry schedules, rate-limit windows, processes starting), and with three the cores were 1.3
    // busy on average; four keep them busy (1.8) and the whole suite took 928 s instead of 1,095 s
    // in the same conditions.
    maxWorkers: 4,
    minWorkers: 1
  }
})
