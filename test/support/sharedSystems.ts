import { dropDatabase } from "@portfolio/platform/testing"
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

let written = 0

/** Writes `record` down; the returned function forgets it (once the worker has stopped that system itself). */
export const remember = (registry: string, record: SharedSystemRecord): (() => void) => {
  const file = join(registry, `${process.pid}-${++written}.json`)
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
 * Stops what the registry still names as `startSystem`'s stop does (SIGTERM, 10 s, then SIGKILL),
 * drops the databases and removes the data folders, then the registry itself.
 */
export const removeRemembered = async (registry: string): Promise<void> => {
  const records = readdirSync(registry).map((file) => JSON.parse(readFileSync(join(registry, file), "utf8")) as SharedSystemRecord)
  const pids = records.flatMap((record) => record.pids)
  signal(pids, "SIGTERM")
  const deadline = Date.now() + 10_000
  while (pids.some(processAlive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  signal(pids.filter(processAlive), "SIGKILL")
  for (const record of records) {
    await dropDatabase(record.database)
    rmSync(record.dataDir, { recursive: true, force: true })
  }
  rmSync(registry, { recursive: true, force: true })
}
