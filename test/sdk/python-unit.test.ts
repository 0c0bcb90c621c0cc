import { describe, expect, it } from "vitest"
import { runPytest } from "../support/pytest.js"

/**
 * The Python SDK's own unit suite (pytest, with Debian's python3-httpx and python3-pytest), run by
 * `npm test` so that a broken Python client fails the build like a broken TypeScript one.
 */
describe("the Python SDK's unit suite", () => {
  it("passes under pytest, its live suite skipped for want of a system", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env }
    delete env["PORTFOLIO_BASE_URL"]
    const run = await runPytest(["-rs"], env)
    expect(run.code, run.output).toBe(0)
    const passed = Number(/(\d+) passed/.exec(run.output)?.[1] ?? 0)
    expect(passed, run.output).toBeGreaterThanOrEqual(40)
    expect(run.output).not.toMatch(/\bfailed\b/)
  })
})
