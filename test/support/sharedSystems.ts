import { dropDatabase } from "@portfolio/platform/testing"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { processAlive } from "../../deploy/local/serviceProcess.js"

/**
 * Where the vitest workers write down the shared systems they leave running (useSharedSystem), so
 * that the run's global teardown removes them: a worker does not outlive the run, and vitest ends it
 * with a signal that leaves no time for stopping five services and dropping a database.
 */
export interface SharedSystemRecord {
  readonly pids: ReadonlyArray<number>
  readonly database: string
  readonly dataDir: string
}

export const makeRegistry = (): string => mkdtempSync(join(tmpdir(), "portfolio-shared-systems-"))

/** Writes `record` down; the returned function forgets it (once the worker has stopped that system itself). */
export const remember = (registry: string, record: SharedSystemRecord): (() => void) => {
  const file = join(registry, `${randomUUID()}.json`)
  writeFileSync(file, JSON.stringify(record))
  return () => rmSync(file, { force: true })
}

const signal = (pids: ReadonlyArray<number>, name: NodeJS.Signals) => {
  for (const pid of pids) {
    try {
      process.kill(pid, name)
    } catch {
      // Gone already.
    }
  }
}

/**
 * Stops what the registry still names as `startSystem`'s stop does (SIGTERM, `graceMs`, then
 * SIGKILL), drops the databases and removes the data folders and their records. A record that
 * cannot be read or removed is reported and kept, and the others are still removed.
 */
export const removeRemembered = async (registry: string, graceMs = 10_000): Promise<void> => {
  const records = readdirSync(registry).flatMap((file) => {
    try {
      return [{ file: join(registry, file), ...(JSON.parse(readFileSync(join(registry, file), "utf8")) as SharedSystemRecord) }]
    } catch (error) {
      console.error(`shared systems: ${file} unreadable, its system left as it is:`, error)
      return []
    }
  })
  const pids = records.flatMap((record) => record.pids)
  signal(pids, "SIGTERM")
  const deadline = Date.now() + graceMs
  while (pids.some(processAlive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  signal(pids.filter(processAlive), "SIGKILL")
  for (const record of records) {
    try {
      await dropDatabase(record.database)
      rmSync(record.dataDir, { recursive: true, force: true })
      rmSync(record.file, { force: true })
    } catch (error) {
      console.error(`shared systems: database ${record.database} or ${record.dataDir} not removed:`, error)
    }
  }
}
