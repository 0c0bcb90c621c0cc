import { localEnvPath, parseLocalEnv, renderLocalEnv } from "@portfolio/cli/LocalEnv"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import net from "node:net"
import { tmpdir } from "node:os"
import { fileURLToPath } from "node:url"
import { assertFreshBundles } from "./compiledBuild.js"
import { type EmbeddedPostgres, startEmbeddedPostgres } from "./embeddedPostgres.js"
import { freePort } from "@portfolio/platform/testing"
import { makePrefixer } from "./logLines.js"
import { type ServiceProcess, spawnService } from "./serviceProcess.js"

export const ServiceNames = ["referential", "provisioning", "webhook-dispatcher", "gateway", "console"] as const
export type ServiceName = (typeof ServiceNames)[number]

export interface SystemPorts {
  readonly gateway: number
  readonly gatewayAdmin: number
  readonly referential: number
  readonly referentialAdmin: number
  readonly provisioning: number
  readonly provisioningAdmin: number
  readonly webhookDispatcherAdmin: number
  readonly console: number
  readonly consoleAdmin: number
}

export interface SystemOptions {
  /** An existing PostgreSQL; when absent an embedded one runs from `<dataDir>/postgres`. */
  readonly databaseUrl?: string
  /**
   * Where `local.env` (and the embedded cluster) live. When absent, a temporary folder removed by
   * `stop()`, so that a test run never overwrites the `.data/local.env` of a system `npm start` runs.
   */
  readonly dataDir?: string
  /** 0 or absent: a free port. */
  readonly ports?: Partial<SystemPorts>
  /** Extra environment of every service (RATE_LIMIT_PER_MINUTE, LOG_LEVEL, INTERNAL_SECRET...). */
  readonly env?: Readonly<Record<string, string>>
  readonly onLog?: (service: string, line: string) => void
  /** No log lines on stdout. */
  readonly quiet?: boolean
  /** Port of the embedded PostgreSQL (default 54329). */
  readonly embeddedPostgresPort?: number
  /** How long each service may take to answer its /readyz (default 60 s). */
  readonly readyTimeoutMs?: number
  /** Options of every service's node (`--cpu-prof` for the benchmarks: NODE_OPTIONS refuses it). */
  readonly nodeArgs?: ReadonlyArray<string>
  /**
   * Run the services from the bundles of `npm run build` (`dist/`) with plain node, as production
   * does, instead of their sources through tsx. Refused before anything starts when a bundle is
   * missing or older than its sources; the launcher never builds by itself (see README, "Build").
   */
  readonly compiled?: boolean
}

export interface RunningSystem {
  readonly gatewayUrl: string
  /** `gatewayUrl` + `/api/v1`. */
  readonly baseUrl: string
  /** The public ports; the webhook dispatcher has none. */
  readonly serviceUrls: Readonly<Record<Exclude<ServiceName, "webhook-dispatcher">, string>>
  /** The console's admin port serves probes and metrics only; the others', their admin APIs too. */
  readonly adminUrls: Readonly<Record<ServiceName, string>>
  /** Every URL whose /readyz the start waited for (probedUrls). */
  readonly readyUrls: ReadonlyArray<string>
  /** `serviceUrls.console` + `/console`: the console's `CONSOLE_URL`, the only origin its forms accept. */
  readonly consoleUrl: string
  /** What a CLI process needs to reach this system. */
  readonly env: Readonly<Record<string, string>>
  /** `readyMs`: from the spawn of the service until it answered /readyz on all its probed ports. */
  readonly processes: ReadonlyArray<{ readonly service: ServiceName; readonly pid: number; readonly readyMs: number }>
  /** Settles when the first service exits, whatever the reason (a crash, or `stop()`). */
  readonly exited: Promise<{ readonly service: ServiceName; readonly code: number | string }>
  readonly stop: () => Promise<void>
}

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const stopGraceMs = 10_000

const resolvePorts = async (given: Partial<SystemPorts> = {}): Promise<SystemPorts> => {
  const pick = async (port: number | undefined) => (port === undefined || port === 0 ? freePort() : port)
  return {
    gateway: await pick(given.gateway),
    gatewayAdmin: await pick(given.gatewayAdmin),
    referential: await pick(given.referential),
    referentialAdmin: await pick(given.referentialAdmin),
    provisioning: await pick(given.provisioning),
    provisioningAdmin: await pick(given.provisioningAdmin),
    webhookDispatcherAdmin: await pick(given.webhookDispatcherAdmin),
    console: await pick(given.console),
    consoleAdmin: await pick(given.consoleAdmin)
  }
}

/** The launcher's own environment, for settings an operator sets in the shell that runs `npm start`. */
const passThrough = (names: ReadonlyArray<string>): Record<string, string> =>
  Object.fromEntries(names.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])))

/** The secret survives restarts (PATs outlive nothing by it, but operators' shells keep it). */
const existingSecret = (dataDir: string) => {
  const file = localEnvPath(dataDir)
  return existsSync(file) ? parseLocalEnv(readFileSync(file, "utf8")).get("INTERNAL_SECRET") : undefined
}

/**
 * A signing key for partner access tokens when none is given (`OAUTH_SIGNING_KEYS`): one P-256
 * key made at each start. Tokens live 5 minutes, so a restart costs partners one token request.
 */
export const localSigningKeys = () => {
  const jwk = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" })
  return JSON.stringify([{ kid: `local-${randomBytes(6).toString("hex")}`, kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y, d: jwk.d }])
}

/**
 * What every service process gets: only what is listed here reaches the services, nothing leaks
 * from the launcher's environment but `extraEnv`.
 */
export const commonEnvironment = (
  extraEnv: Readonly<Record<string, string>>,
  { databaseUrl, natsUrl, secret }: { readonly databaseUrl: string; readonly natsUrl: string; readonly secret: string }
): Record<string, string> => ({
  PATH: process.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
  ...(process.env["HOME"] === undefined ? {} : { HOME: process.env["HOME"] }),
  HOST: "127.0.0.1",
  ...extraEnv,
  DATABASE_URL: databaseUrl,
  NATS_URL: natsUrl,
  INTERNAL_SECRET: secret
})

/** Where the services reach each other, and where browsers and clients reach them. */
export interface ServiceAddresses {
  readonly serviceUrls: Readonly<Record<Exclude<ServiceName, "webhook-dispatcher">, string>>
  readonly adminUrls: Readonly<Record<ServiceName, string>>
  /** The console's `CONSOLE_URL`, the only origin its forms accept. */
  readonly consoleUrl: string
  /** The port clients reach the gateway on, for its `PUBLIC_BASE_URL` default. */
  readonly gatewayPort: number
}

/**
 * Where a process of `name` answers /readyz: both ports of the referential, provisioning and the
 * console; the admin port of the gateway (its public port serves no probe) and of the webhook
 * dispatcher (it has no other).
 */
export const probedUrls = (name: ServiceName, urls: { readonly service?: string; readonly admin: string }): ReadonlyArray<string> =>
  name === "gateway" || name === "webhook-dispatcher" || urls.service === undefined ? [urls.admin] : [urls.service, urls.admin]

/** The ports one process of a service listens on; the webhook dispatcher has an admin port only. */
export interface ListenPorts {
  readonly port?: number
  readonly admin: number
}

const listenPorts = (ports: SystemPorts): Record<ServiceName, ListenPorts> => ({
  referential: { port: ports.referential, admin: ports.referentialAdmin },
  provisioning: { port: ports.provisioning, admin: ports.provisioningAdmin },
  "webhook-dispatcher": { admin: ports.webhookDispatcherAdmin },
  gateway: { port: ports.gateway, admin: ports.gatewayAdmin },
  console: { port: ports.console, admin: ports.consoleAdmin }
})

/**
 * The settings of one process of `name` beyond the common ones: its own ports, where it finds the
 * others, and the local defaults. Replicas of a service differ only by their ports; whatever
 * they must share (`OAUTH_SIGNING_KEYS` above all) the caller gives in `extraEnv`.
 */
export const serviceEnvironment = (
  name: ServiceName,
  listen: ListenPorts,
  { adminUrls, consoleUrl, gatewayPort, serviceUrls }: ServiceAddresses,
  extraEnv: Readonly<Record<string, string>>
): Record<string, string> => {
  const own = { ...(listen.port === undefined ? {} : { PORT: String(listen.port) }), ADMIN_PORT: String(listen.admin) }
  switch (name) {
    case "referential":
      return own
    case "provisioning":
      return {
        // Local use keeps invitation mail in the database (`portfolio mail list`) unless an SMTP
        // server is given; the service itself refuses to start without one of the two.
        MAIL_TRANSPORT: extraEnv["MAIL_TRANSPORT"] ?? (extraEnv["SMTP_URL"] === undefined ? "local" : "smtp"),
        // An identity provider run on this machine serves plain http on loopback: allowed here
        // unless the environment says otherwise; the chart never allows it (docs/security.md).
        SSO_ALLOW_LOOPBACK_ISSUERS: extraEnv["SSO_ALLOW_LOOPBACK_ISSUERS"] ?? process.env["SSO_ALLOW_LOOPBACK_ISSUERS"] ?? "true",
        // Where the providers send the browser back after a single sign-on: the console's address.
        CONSOLE_URL: consoleUrl,
        // SCIM answers name each User by its URI under the public API (the gateway's base).
        PUBLIC_BASE_URL: extraEnv["PUBLIC_BASE_URL"] ?? `http://localhost:${gatewayPort}/api/v1`,
        ...own
      }
    case "webhook-dispatcher":
      return {
        // Local receivers listen on loopback over plain http: allowed here unless the environment
        // says otherwise; the chart never allows it (docs/product-rules.md#webhooks).
        WEBHOOK_ALLOW_PRIVATE_TARGETS: extraEnv["WEBHOOK_ALLOW_PRIVATE_TARGETS"] ?? process.env["WEBHOOK_ALLOW_PRIVATE_TARGETS"] ?? "true",
        ...passThrough(["WEBHOOK_RETRY_SCHEDULE", "WEBHOOK_DISABLE_AFTER_FAILURES", "WEBHOOK_TIMEOUT", "WEBHOOK_CONCURRENCY"].filter((n) => extraEnv[n] === undefined)),
        ...own
      }
    case "gateway":
      return {
        OAUTH_SIGNING_KEYS: extraEnv["OAUTH_SIGNING_KEYS"] ?? process.env["OAUTH_SIGNING_KEYS"] ?? localSigningKeys(),
        ...own,
        REFERENTIAL_URL: serviceUrls.referential,
        PROVISIONING_URL: serviceUrls.provisioning,
        // Where an approval reads the requester's membership again (docs/product-rules.md#pat-requests).
        PROVISIONING_ADMIN_URL: adminUrls.provisioning
      }
    case "console":
      return {
        ...own,
        GATEWAY_ADMIN_URL: adminUrls.gateway,
        PROVISIONING_ADMIN_URL: adminUrls.provisioning,
        WEBHOOK_ADMIN_URL: adminUrls["webhook-dispatcher"],
        // The address the launcher prints: a browser on another one (localhost) sends an origin
        // the console refuses its forms from.
        CONSOLE_URL: consoleUrl,
        // What the gateway publishes as its base unless told otherwise (its PUBLIC_BASE_URL default).
        PUBLIC_BASE_URL: extraEnv["PUBLIC_BASE_URL"] ?? `http://localhost:${gatewayPort}/api/v1`
      }
  }
}

export const writeLocalEnv = (dataDir: string, entries: Readonly<Record<string, string>>) => {
  const file = localEnvPath(dataDir)
  writeFileSync(
    file,
    renderLocalEnv(entries, [
      "Written by the local launcher (npm start) at each start; the portfolio CLI reads it.",
      "INTERNAL_SECRET signs operator calls to the admin APIs: keep this file private."
    ]),
    { mode: 0o600 }
  )
  chmodSync(file, 0o600)
}

/**
 * Resolves once `url`'s port accepts connections, rejects after `timeoutMs`. For the gateway's
 * public port, which has no probe: it listens only once everything behind it is built, and a bare
 * connection is not a request, so the rate limit of the launcher's address is left untouched.
 */
export const accepting = async (url: string, timeoutMs: number) => {
  const { hostname, port } = new URL(url)
  const deadline = Date.now() + timeoutMs
  const connects = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(port), hostname, () => {
        socket.destroy()
        resolve(true)
      })
      socket.on("error", () => resolve(false))
    })
  while (!(await connects())) {
    if (Date.now() > deadline) throw new Error(`nothing accepted connections on ${url} within ${Math.round(timeoutMs / 1000)} s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * Starts the whole system locally: PostgreSQL (given or embedded), then the five services as
 * child processes, and waits until each answers /readyz: on both ports of the referential,
 * provisioning and the console, on the admin port of the gateway (its public port serves no probe)
 * and of the webhook dispatcher (it has no other).
 */
export const startSystem = async (options: SystemOptions = {}): Promise<RunningSystem> => {
  if (options.compiled === true) assertFreshBundles(repoRoot, ServiceNames)
  const temporaryDataDir = options.dataDir === undefined
  const dataDir = options.dataDir ?? mkdtempSync(`${tmpdir()}/portfolio-system-`)
  mkdirSync(dataDir, { recursive: true })
  // An embedded cluster runs as the `postgres` user when the launcher is root: it must get through.
  if (temporaryDataDir) chmodSync(dataDir, 0o755)

  const extraEnv = options.env ?? {}
  const prefix = makePrefixer(["postgres", ...ServiceNames], process.stdout.isTTY === true)
  const log = (service: string, line: string) => {
    options.onLog?.(service, line)
    if (options.quiet !== true) process.stdout.write(`${prefix(service)}${line}\n`)
  }

  let database: EmbeddedPostgres | undefined
  const services: Array<{ readonly name: ServiceName; readonly child: ServiceProcess; readonly spawnedAt: number; readyMs?: number }> = []
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all(services.map(({ child }) => child.stop(stopGraceMs)))
      await database?.stop()
      if (temporaryDataDir) rmSync(dataDir, { recursive: true, force: true })
    })())

  try {
    const startDatabase = async () => {
      database = await startEmbeddedPostgres({
        dataDir,
        port: options.embeddedPostgresPort ?? 54329,
        onLog: (line) => log("postgres", line)
      })
      return database.url
    }
    const databaseUrl = options.databaseUrl ?? (await startDatabase())
    const ports = await resolvePorts(options.ports)
    const local = (port: number) => `http://127.0.0.1:${port}`
    const serviceUrls = {
      gateway: local(ports.gateway),
      referential: local(ports.referential),
      provisioning: local(ports.provisioning),
      console: local(ports.console)
    }
    const adminUrls = {
      gateway: local(ports.gatewayAdmin),
      referential: local(ports.referentialAdmin),
      provisioning: local(ports.provisioningAdmin),
      "webhook-dispatcher": local(ports.webhookDispatcherAdmin),
      console: local(ports.consoleAdmin)
    }
    const consoleUrl = `${serviceUrls.console}/console`
    const secret = extraEnv["INTERNAL_SECRET"] ?? existingSecret(dataDir) ?? randomBytes(32).toString("hex")
    const natsUrl = extraEnv["NATS_URL"] ?? "nats://127.0.0.1:4222"

    const cliEnv: Record<string, string> = {
      INTERNAL_SECRET: secret,
      GATEWAY_URL: serviceUrls.gateway,
      GATEWAY_ADMIN_URL: adminUrls.gateway,
      PROVISIONING_ADMIN_URL: adminUrls.provisioning,
      REFERENTIAL_ADMIN_URL: adminUrls.referential,
      WEBHOOK_ADMIN_URL: adminUrls["webhook-dispatcher"],
      CONSOLE_ADMIN_URL: adminUrls.console,
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      DATA_DIR: dataDir,
      ...(extraEnv["ERRORS_URL"] === undefined ? {} : { ERRORS_URL: extraEnv["ERRORS_URL"] })
    }
    writeLocalEnv(dataDir, cliEnv)

    const common = commonEnvironment(extraEnv, { databaseUrl, natsUrl, secret })
    for (const name of ServiceNames) {
      const child = spawnService({
        name,
        cwd: repoRoot,
        env: { ...common, SERVICE_NAME: name, ...serviceEnvironment(name, listenPorts(ports)[name], { serviceUrls, adminUrls, consoleUrl, gatewayPort: ports.gateway }, extraEnv) },
        ...(options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs }),
        compiled: options.compiled === true,
        onLine: (line) => log(name, line)
      })
      services.push({ name, child, spawnedAt: Date.now() })
    }
    const readyUrlsOf = (name: ServiceName) => probedUrls(name, { ...(name === "webhook-dispatcher" ? {} : { service: serviceUrls[name] }), admin: adminUrls[name] })
    const readyTimeoutMs = options.readyTimeoutMs ?? 60_000
    await Promise.all(
      services.map(async (service) => {
        const { child, name } = service
        await child.ready(readyUrlsOf(name), readyTimeoutMs)
        service.readyMs = Date.now() - service.spawnedAt
      })
    )
    await accepting(serviceUrls.gateway, readyTimeoutMs)

    return {
      gatewayUrl: serviceUrls.gateway,
      baseUrl: `${serviceUrls.gateway}/api/v1`,
      serviceUrls,
      adminUrls,
      readyUrls: ServiceNames.flatMap(readyUrlsOf),
      consoleUrl,
      env: cliEnv,
      processes: services.map(({ child, name, readyMs }) => ({ service: name, pid: child.pid, readyMs: readyMs ?? 0 })),
      exited: Promise.race(services.map(({ child, name }) => child.exited.then((code) => ({ service: name, code })))),
      stop
    }
  } catch (error) {
    await stop()
    throw error
  }
}
