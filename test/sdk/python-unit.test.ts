import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/cli.js"

/**
 * The Python SDK's own unit suite (pytest, with Debian's python3-httpx and python3-pytest), run by
 * `npm test` so that a broken Python client fails the build like a broken TypeScript one.
 */
const python = process.env["PORTFOLIO_PYTHON"] ?? "/usr/bin/python3"

describe("the Python SDK's unit suite", () => {
  it("passes under pytest, its live suite skipped for want of a system", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: "1" }
    delete env["PORTFOLIO_BASE_URL"]
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"], {
        cwd: `${repoRoot}libs/client-python`,
        env,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, output }))
    })
    expect(run.code, run.output).toBe(0)
    const passed = Number(/(\d+) passed/.exec(run.output)?.[1] ?? 0)
    expect(passed, run.output).toBeGreaterThanOrEqual(40)
    expect(run.output).not.toMatch(/\bfailed\b/)
  })
})
