import { createDatabase } from "@portfolio/platform/testing"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { makeRegistry, remember, removeRemembered } from "./sharedSystems.js"

const databaseExists = async (name: string) => {
  const client = new pg.Client({ connectionString: process.env["TEST_POSTGRES_URL"] ?? "postgres://postgres@127.0.0.1:5432/test" })
  await client.connect()
  try {
    return (await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1
  } finally {
    await client.end()
  }
}

/** A process that stops on SIGTERM, and one that must be killed. */
const child = (ignoreTerm: boolean) =>
  spawn(process.execPath, ["-e", `${ignoreTerm ? "process.on('SIGTERM', () => {});" : ""} setInterval(() => {}, 1000)`], { stdio: "ignore" })

/** The signal that ended `process` within 2 s (this test's own children: their exit is seen, not guessed from their pid). */
const endedBy = (process: ChildProcess) =>
  process.signalCode !== null
    ? Promise.resolve(process.signalCode)
    : new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve("still running"), 2_000)
      process.once("exit", (_, signal) => {
        clearTimeout(timer)
        resolve(signal ?? "exited")
      })
    })

describe("the registry of shared systems (what the run's teardown removes)", () => {
  it("stops the processes it names, SIGKILL for one that ignores SIGTERM, drops the databases and removes the folders and the records", async () => {
    const registry = makeRegistry()
    const polite = child(false)
    const stubborn = child(true)
    const database = await createDatabase("bb_registry")
    const forgotten = await createDatabase("bb_registry")
    const dataDir = mkdtempSync(join(tmpdir(), "portfolio-system-registry-test-"))
    try {
      remember(registry, { pids: [polite.pid!, stubborn.pid!], database: database.name, dataDir })
      remember(registry, { pids: [], database: forgotten.name, dataDir })()
      expect(readdirSync(registry)).toHaveLength(1)

      await removeRemembered(registry, 1_000)

      expect([await endedBy(polite), await endedBy(stubborn)]).toEqual(["SIGTERM", "SIGKILL"])
      expect(await databaseExists(database.name)).toBe(false)
      expect(await databaseExists(forgotten.name)).toBe(true)
      expect([existsSync(dataDir), readdirSync(registry)]).toEqual([false, []])
    } finally {
      polite.kill("SIGKILL")
      stubborn.kill("SIGKILL")
      await database.drop()
      await forgotten.drop()
      rmSync(dataDir, { recursive: true, force: true })
      rmSync(registry, { recursive: true, force: true })
    }
  }, 30_000)
})
