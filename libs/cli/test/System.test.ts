import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { startEmbeddedPostgres } from "../../../deploy/local/embeddedPostgres.js"
import { processAlive } from "../../../deploy/local/serviceProcess.js"
import { freePort } from "@portfolio/platform/testing"
import { startSystem } from "../../../deploy/local/system.js"
import { fromSources } from "../../../test/support/cli.js"
import { parseLocalEnv } from "../src/LocalEnv.js"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const serverUrl = "postgres://postgres@127.0.0.1:5432"

const adminQuery = (sql: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: `${serverUrl}/test` })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  })

/** A database of its own on the machine's PostgreSQL, dropped with the scope. */
const freshDatabase = Effect.acquireRelease(
  Effect.sync(() => `it_cli_${randomBytes(6).toString("hex")}`).pipe(Effect.tap((name) => adminQuery(`CREATE DATABASE ${name}`))),
  (name) => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
).pipe(Effect.map((name) => `${serverUrl}/${name}`))

const status = (url: string) => Effect.promise(() => fetch(url).then((response) => response.status))

/** This process's children that run a service (read from /proc: the failing start returns no pids). */
const serviceChildren = () =>
  readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
        return ppid === process.pid && /(services\/[a-z-]+\/src|dist\/[a-z-]+)\/main\.(ts|mjs)/.test(readFileSync(`/proc/${pid}/cmdline`, "utf8"))
      } catch {
        return false
      }
    })

/** The real CLI in a child process that knows nothing but DATA_DIR: everything else comes from local.env. */
const portfolioWithDataDir = (dataDir: string, args: ReadonlyArray<string>) =>
  Effect.promise(
    () =>
      new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ["libs/cli/bin/portfolio.mjs", ...args],
          { cwd: repoRoot, env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", DATA_DIR: dataDir } },
          (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
        )
      })
  )

// The bundles `npm test` builds first (BLACKBOX_SOURCES=1: the sources): the launcher is what is
// tested here, and `npm start` from the sources has its own test (test/blackbox/npm-start.test.ts).
const compiled = !fromSources

describe("startSystem", () => {
  it.effect("starts the five services ready on their ports, writes local.env for the CLI, and stop() leaves no process", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* freshDatabase
      const system = yield* Effect.acquireRelease(
        Effect.promise(() => startSystem({ databaseUrl, quiet: true, compiled })),
        (running) => Effect.promise(() => running.stop())
      )
      expect(system.baseUrl).toBe(`${system.gatewayUrl}/api/v1`)
      expect(system.processes.map(({ service }) => service)).toEqual(["referential", "provisioning", "webhook-dispatcher", "gateway", "console"])
      expect(serviceChildren().sort()).toEqual(system.processes.map(({ pid }) => String(pid)).sort())
      // Probes on every port but the gateway's public one, where anyone could call them.
      for (const url of [system.serviceUrls.referential, system.serviceUrls.provisioning, system.serviceUrls.console, ...Object.values(system.adminUrls)]) {
        expect([url, yield* status(`${url}/readyz`)]).toEqual([url, 200])
        expect([url, yield* status(`${url}/healthz`)]).toEqual([url, 200])
      }
      expect([yield* status(`${system.gatewayUrl}/readyz`), yield* status(`${system.gatewayUrl}/healthz`)]).toEqual([404, 404])

      const dataDir = system.env["DATA_DIR"] ?? ""
      const file = join(dataDir, "local.env")
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const written = Object.fromEntries(parseLocalEnv(readFileSync(file, "utf8")))
      expect(written).toEqual(system.env)
      expect(written["INTERNAL_SECRET"]).toMatch(/^[0-9a-f]{64}$/)
      expect(written["DATABASE_URL"]).toBe(databaseUrl)

      const created = yield* portfolioWithDataDir(dataDir, ["tenant", "create", "sys-check", "--admin-email", "admin@sys-check.example", "--json"])
      expect(created.stderr).toBe("")
      expect(created.code).toBe(0)
      expect(JSON.parse(created.stdout)).toMatchObject({ slug: "sys-check", adminEmail: "admin@sys-check.example" })
      const mail = yield* portfolioWithDataDir(dataDir, ["mail", "list", "--to", "nobody@sys-check.example", "--json"])
      expect([mail.code, mail.stdout.trim(), mail.stderr]).toEqual([0, "[]", ""])

      yield* Effect.promise(() => system.stop())
      expect(system.processes.filter(({ pid }) => processAlive(pid))).toEqual([])
      expect(serviceChildren()).toEqual([])
      expect(existsSync(dataDir)).toBe(false)
    }), 120_000)

  it.effect("fails with the service's last log lines when a service cannot start, and leaves nothing running", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* freshDatabase
      const error = yield* Effect.flip(
        Effect.tryPromise(() => startSystem({ databaseUrl, quiet: true, compiled, env: { INTERNAL_SECRET: "too-short" } }))
      )
      const message = String(error.cause)
      expect(message).toMatch(/(referential|provisioning|webhook-dispatcher|gateway|console) exited \(code \d+\) before it was ready; its last log lines:/)
      expect(message).toContain("must be at least 32 characters")
      expect(serviceChildren()).toEqual([])
    }), 120_000)
})

describe("embedded PostgreSQL", () => {
  it.effect("initialises a cluster with a portfolio database on first start and keeps its data across restarts", () =>
    Effect.gen(function*() {
      const dataDir = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const dir = mkdtempSync(join(tmpdir(), "portfolio-pg-"))
          // As root the cluster runs as `postgres`, which must be able to enter the folder.
          chmodSync(dir, 0o755)
          return dir
        }),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const port = yield* Effect.promise(freePort)
      const query = (url: string, sql: string) =>
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: url })
          await client.connect()
          try {
            return (await client.query(sql)).rows
          } finally {
            await client.end()
          }
        })
      const start = Effect.acquireRelease(
        Effect.promise(() => startEmbeddedPostgres({ dataDir, port, onLog: () => undefined })),
        (cluster) => Effect.promise(() => cluster.stop())
      )

      const first = yield* Effect.scoped(
        Effect.gen(function*() {
          const cluster = yield* start
          yield* query(cluster.url, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)")
          return cluster.url
        })
      )
      expect(first).toBe(`postgres://postgres:postgres@127.0.0.1:${port}/portfolio`)
      const rows = yield* Effect.scoped(Effect.flatMap(start, (cluster) => query(cluster.url, "SELECT n FROM kept")))
      expect(rows).toEqual([{ n: 42 }])
    }), 120_000)
})
