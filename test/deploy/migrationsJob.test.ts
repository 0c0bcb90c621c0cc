import { createDatabase, freePort, type FreshDatabase } from "@portfolio/platform/testing"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawnService } from "../../deploy/local/serviceProcess.js"
import { fromSources, repoRoot } from "../support/cli.js"

/**
 * What the chart's migration Job and its replicas rely on, with the real services (the bundles the
 * image runs, or their sources with BLACKBOX_SOURCES=1): MIGRATIONS=only migrates and exits 0 without
 * NATS (the pre-install hook needs nothing but PostgreSQL), MIGRATIONS=skip starts on a migrated
 * schema and stops with the reason on one that is not.
 */
const services = [
  { name: "gateway", schema: "gateway" },
  { name: "referential", schema: "referential" },
  { name: "provisioning", schema: "provisioning" },
  { name: "webhook-dispatcher", schema: "webhook_dispatcher" },
  { name: "console", schema: "console" }
] as const

const internalSecret = randomBytes(24).toString("hex")
const signingKeys = JSON.stringify([{ kid: "job", pem: generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "sec1" }) }])

/** What the chart gives every container of a service, NATS and SMTP unreachable. */
const chartEnvironment = async (databaseUrl: string, extra: Record<string, string>) => ({
  PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  DATABASE_URL: databaseUrl,
  INTERNAL_SECRET: internalSecret,
  OAUTH_SIGNING_KEYS: signingKeys,
  NATS_URL: "nats://127.0.0.1:1",
  SMTP_URL: "smtp://127.0.0.1:1",
  MAIL_TRANSPORT: "smtp",
  REFERENTIAL_URL: "http://127.0.0.1:1",
  PROVISIONING_URL: "http://127.0.0.1:1",
  HOST: "127.0.0.1",
  PORT: String(await freePort()),
  ADMIN_PORT: String(await freePort()),
  LOG_LEVEL: "Info",
  ...extra
})

const start = async (name: string, databaseUrl: string, extra: Record<string, string>) => {
  const log: Array<string> = []
  const env = await chartEnvironment(databaseUrl, extra)
  // The image's bundle, as the chart's Job runs it.
  const service = spawnService({ name, cwd: repoRoot, env, compiled: !fromSources, onLine: (line) => log.push(line) })
  return { service, env, log }
}

const recordedMigrations = async (url: string, schema: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(`SELECT count(*)::int AS n FROM ${schema}.migrations`)).rows[0].n as number
  } finally {
    await client.end()
  }
}

const withDeadline = <A>(promise: Promise<A>, ms: number, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} after ${ms} ms`)), ms))])

describe("the migration Job's containers (MIGRATIONS=only)", () => {
  let database: FreshDatabase
  beforeAll(async () => {
    database = await createDatabase("it_migrations_job")
  })
  afterAll(async () => {
    await database?.drop()
  })

  it("migrate every service's schema and exit 0 without serving, NATS and SMTP unreachable", async () => {
    const started = await Promise.all(services.map(({ name }) => start(name, database.url, { MIGRATIONS: "only" })))
    const codes = await withDeadline(Promise.all(started.map(({ service }) => service.exited)), 90_000, "the containers had not exited")
    expect(codes, started.map(({ log }) => log.slice(-5).join("\n")).join("\n---\n")).toEqual(services.map(() => 0))
    for (const { schema } of services) expect(await recordedMigrations(database.url, schema), schema).toBeGreaterThan(0)
    for (const { log } of started) {
      expect(log.some((line) => line.includes("MIGRATIONS=only: the schema is up to date, stopping"))).toBe(true)
      expect(log.some((line) => line.includes("service started"))).toBe(false)
    }
  }, 120_000)

  it("let a replica with MIGRATIONS=skip start on the migrated schema", async () => {
    const { env, service } = await start("referential", database.url, { MIGRATIONS: "skip", MIGRATIONS_WAIT_TIMEOUT: "5 seconds" })
    try {
      await service.ready([`http://127.0.0.1:${env.ADMIN_PORT}`], 60_000)
    } finally {
      await service.stop(10_000)
    }
  }, 90_000)
})

describe("a replica with MIGRATIONS=skip on a schema nobody migrated", () => {
  let database: FreshDatabase
  beforeAll(async () => {
    database = await createDatabase("it_migrations_skip")
  })
  afterAll(async () => {
    await database?.drop()
  })

  it("stops with a non-zero code, saying what is missing and what to run", async () => {
    const { log, service } = await start("referential", database.url, { MIGRATIONS: "skip", MIGRATIONS_WAIT_TIMEOUT: "2 seconds" })
    const code = await withDeadline(service.exited, 60_000, "the replica had not stopped")
    expect(code).not.toBe(0)
    expect(log.join("\n")).toContain("MIGRATIONS=skip: the schema 'referential' still lacks migrations after 2s")
  }, 90_000)
})
