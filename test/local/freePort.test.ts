import { createServer } from "node:net"
import { describe, expect, it } from "vitest"
import { freePort } from "@portfolio/platform/testing"

describe("freePort under the test runner", () => {
  it("hands this worker ports of its own range, never the same one twice, each free to listen on", async () => {
    const pool = Number(process.env["VITEST_POOL_ID"])
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()))
    expect(new Set(ports).size).toBe(ports.length)
    const start = 20_000 + ((pool - 1) % 10) * 1_000
    for (const port of ports) expect(port >= start && port < start + 1_000, `port ${port} outside ${start}-${start + 999}`).toBe(true)
  })

  it("skips a port something already listens on", async () => {
    const taken = await freePort()
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(taken, "127.0.0.1", resolve))
    try {
      const handed = await Promise.all(Array.from({ length: 999 }, () => freePort()))
      expect(handed).not.toContain(taken)
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  })
})

describe("freePort outside the test runner", () => {
  it("hands the launcher, the drills and the benchmarks ports below the ephemeral range the OS gives outgoing connections", async () => {
    const { execFileSync } = await import("node:child_process")
    const script = "import { freePort } from './libs/platform/testing/FreePort.ts'; const ports = []; for (let i = 0; i < 20; i++) ports.push(await freePort()); console.log(JSON.stringify(ports))"
    const env = { ...process.env }
    delete env["VITEST_POOL_ID"]
    const ports: Array<number> = JSON.parse(execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { env, encoding: "utf8" }))
    expect(new Set(ports).size).toBe(20)
    for (const port of ports) expect(port >= 30_000 && port < 32_768, `port ${port}`).toBe(true)
  })
})
