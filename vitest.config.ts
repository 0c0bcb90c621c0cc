import { readFileSync } from "node:fs"
import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The files that took longest in the last CIs (120 to 210 s each, on the CI's two cores) start
 * first, the rest in vitest's own order. A clean clone has no durations of a last run and vitest
 * then sorts by size: webhooks-isolation (~145 s) started last and ran nearly alone at the end
 * (files' durations summed 3,879 s, 970 s over four workers; vitest took 1,013 s). Only a few, so
 * that not every worker starts its run with a whole system. A stale list costs order, not tests.
 */
const LongestFiles = [
  "test/blackbox/assertion-replay.test.ts",
  "test/browser/console.test.ts",
  "test/blackbox/webhooks-isolation.test.ts",
  "test/blackbox/partner-replicas.test.ts"
]

/**
 * The files that share a system (test/support/useSystem.ts, useSharedSystem) go last, together
 * (but for the longest above, which start first): a worker then takes them one after another and
 * starts the shared system once, where spread over the run each would find it stopped and start
 * it again.
 */
const sharesSystem = (file: TestSpecification) => /\buseSharedSystem\(\)/.test(readFileSync(file.moduleId, "utf8"))

class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>) {
    const rank = (file: TestSpecification) => LongestFiles.findIndex((path) => file.moduleId.endsWith(`/${path}`))
    const sorted = await super.sort(files)
    const longest = sorted.filter((file) => rank(file) >= 0).sort((a, b) => rank(a) - rank(b))
    const rest = sorted.filter((file) => rank(file) < 0)
    const sharing = new Set(rest.filter(sharesSystem))
    return [...longest, ...rest.filter((file) => !sharing.has(file)), ...sharing]
  }
}

export default defineConfig({
  test: {
    include: ["libs/{domain,platform,cli,client-fixtures}/test/**/*.test.ts", "services/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "test/bench/**"],
    // A hang still fails, two minutes later; a slow CLI process or start under load does not.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Four files at a time on 2 cores: the black-box files spend much of their time waiting (webhook
    // retry schedules, rate-limit windows, processes starting), and with three the cores were 1.3
    // busy on average; four keep them busy (1.8) and the whole suite took 928 s instead of 1,095 s
    // in the same conditions.
    maxWorkers: 4,
    // Each worker runs its files one after another in one module graph instead of loading Effect,
    // the platform and the service again for every file: libs and services took 255 CPU-s and
    // 129 s instead of 902 CPU-s and 453 s (same machine, same hour). A file must therefore leave
    // no global state behind.
    isolate: false,
    sequence: { sequencer: LongestFirst },
    // The registry of the systems that files share, and their removal once the run ends.
    globalSetup: ["test/support/globalSetup.ts"]
  }
})
