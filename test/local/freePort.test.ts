import { createServer } from "node:net"
import { describe, expect, it } from "vitest"
import { freePort } from "../../deploy/local/freePort.js"

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
