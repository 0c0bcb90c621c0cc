import { FetchHttpClient } from "effect/http"
import { AdminClients, createPat, createTenant, defaultDataDir, getTenant, OperatorSettings, reportFailure, seedDemo } from "@portfolio/cli"
import { ErrorsUrl } from "@portfolio/platform/http"
import { DefaultPorts } from "@portfolio/platform/config"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { type RunningSystem, startSystem } from "./system.js"

/**
 * `npm start`: the whole system on this machine. The first start creates the `demo` tenant,
 * seeds it and prints two PATs; later starts find it and say how to mint more. `npm start --
 * --compiled` runs the services from `npm run build`'s bundles instead of their sources.
 */
const env = process.env
const DemoTenant = "demo"
const DemoAdmin = "admin@demo.example"

const port = (name: string, fallback: number) => {
  const value = env[name]
  if (value === undefined || value === "") return fallback
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 65535) {
    console.error(`${name} must be a TCP port (1-65535), got '${value}'`)
    process.exit(1)
  }
  return parsed
}

/**
 * How long each service may take to answer its /readyz (START_TIMEOUT, seconds; 120 by default): a
 * first start from the sources on a busy two-core machine compiles and loads every service at once.
 */
const startTimeoutSeconds = (() => {
  const value = env["START_TIMEOUT"]
  if (value === undefined || value === "") return 120
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 1) {
    console.error(`START_TIMEOUT must be a number of seconds (1 or more), got '${value}'`)
    process.exit(1)
  }
  return parsed
})()

const ports = {
  gateway: port("PORT", DefaultPorts.gateway.api),
  gatewayAdmin: port("ADMIN_PORT", DefaultPorts.gateway.admin),
  referential: port("REFERENTIAL_PORT", DefaultPorts.referential.api),
  referentialAdmin: port("REFERENTIAL_ADMIN_PORT", DefaultPorts.referential.admin),
  provisioning: port("PROVISIONING_PORT", DefaultPorts.provisioning.api),
  provisioningAdmin: port("PROVISIONING_ADMIN_PORT", DefaultPorts.provisioning.admin),
  webhookDispatcherAdmin: port("WEBHOOK_ADMIN_PORT", DefaultPorts["webhook-dispatcher"].admin),
  console: port("CONSOLE_PORT", DefaultPorts.console.api),
  consoleAdmin: port("CONSOLE_ADMIN_PORT", DefaultPorts.console.admin)
}

// The services take their own settings (LOG_LEVEL, RATE_LIMIT_PER_MINUTE...) from this shell;
// npm's own variables mean nothing to them.
const serviceEnv = Object.fromEntries(
  Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && !entry[0].startsWith("npm_"))
)

const operatorCalls = (system: RunningSystem) =>
  AdminClients.layer.pipe(
    Layer.provide(OperatorSettings.layer),
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(system.env, { preserveEmptyStrings: true })))
  )

const curlLine = (system: RunningSystem, token: string) =>
  `curl -s -H "Authorization: Bearer ${token}" "${system.baseUrl.replace("127.0.0.1", "localhost")}/referentiel/applications?criticality=MISSION_CRITICAL"`

const firstStart = (system: RunningSystem) =>
  Effect.gen(function*() {
    console.log(`\nFirst start: creating the '${DemoTenant}' tenant and its demo referential...`)
    const created = yield* createTenant({ slug: DemoTenant, adminEmail: DemoAdmin })
    const seedStarted = Date.now()
    const { result } = yield* seedDemo({ tenant: DemoTenant, applications: 200, functions: 500 })
    const seedMs = Date.now() - seedStarted
    const read = yield* createPat({ tenant: DemoTenant, email: DemoAdmin, scope: "read" })
    const write = yield* createPat({ tenant: DemoTenant, email: DemoAdmin, scope: "write" })
    console.log(
      [
        "",
        `Tenant '${DemoTenant}' (${created.tenant.id}), tenant-admin ${DemoAdmin}.`,
        `Seeded ${result.applications} applications, ${result.functions} business functions and ${result.links} links in ${seedMs} ms.`,
        "",
        "Personal access tokens of the demo admin (shown once, valid 90 days):",
        `  read:  ${read.pat.token}`,
        `  write: ${write.pat.token}`,
        "",
        "Try:",
        `  ${curlLine(system, read.pat.token)}`
      ].join("\n")
    )
  })

const laterStart = (tenantId: string) =>
  Effect.sync(() =>
    console.log(
      [
        "",
        `The '${DemoTenant}' tenant exists (${tenantId}). Mint a token with:`,
        `  npx portfolio pat create --tenant ${DemoTenant} --email ${DemoAdmin} --scope read`
      ].join("\n")
    )
  )

const welcome = (system: RunningSystem) =>
  Effect.gen(function*() {
    const existing = yield* getTenant(DemoTenant).pipe(
      Effect.map(Option.some),
      Effect.catchTag("NotFound", () => Effect.succeedNone)
    )
    yield* Option.match(existing, { onNone: () => firstStart(system), onSome: (tenant) => laterStart(tenant.id) })
    console.log("\nCtrl-C stops everything.")
  }).pipe(
    Effect.provide(operatorCalls(system)),
    Effect.catchCause((cause) =>
      Effect.andThen(Effect.sync(() => console.error("\nThe demo tenant could not be prepared:")), reportFailure(cause))
    ),
    Effect.provide(ErrorsUrl.layer)
  )

let system: RunningSystem | undefined
let stopping = false

// `npm start` runs this file with `node --import tsx`, not the `tsx` command: that one relays a
// Ctrl-C to its child and SIGKILLs it when the child has not acknowledged the signal within 30 ms,
// which a loaded machine misses; the shutdown below then never runs (no "Stopped.", services and
// the embedded PostgreSQL left to stop on their own).

const shutdown = async (reason: string, code: number) => {
  if (stopping) return
  stopping = true
  console.log(`\n${reason}: stopping...`)
  await system?.stop()
  console.log("Stopped.")
  process.exit(code)
}

process.on("SIGINT", () => void shutdown("SIGINT", 0))
process.on("SIGTERM", () => void shutdown("SIGTERM", 0))

const started = Date.now()
try {
  system = await startSystem({
    ...(env["DATABASE_URL"] ? { databaseUrl: env["DATABASE_URL"] } : {}),
    dataDir: env["DATA_DIR"] || defaultDataDir,
    ports,
    env: serviceEnv,
    embeddedPostgresPort: port("EMBEDDED_PG_PORT", 54329),
    readyTimeoutMs: startTimeoutSeconds * 1000,
    compiled: process.argv.includes("--compiled")
  })
} catch (error) {
  // A Ctrl-C during start-up ends the services before they are ready: that is not a failure.
  if (stopping) process.exit(0)
  console.error(`\nThe system did not start: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}

const running = system
console.log(
  [
    "",
    `Ready in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
    `  public API:  ${running.baseUrl}   (reference: ${running.baseUrl}/docs, OpenAPI: ${running.baseUrl}/openapi.json)`,
    `  console:     ${running.consoleUrl}`,
    `  admin APIs:  gateway ${running.adminUrls.gateway}, referential ${running.adminUrls.referential}, provisioning ${running.adminUrls.provisioning}, webhooks ${running.adminUrls["webhook-dispatcher"]}`,
    `  database:    ${running.env["DATABASE_URL"]}`,
    `  CLI config:  ${running.env["DATA_DIR"]}/local.env`
  ].join("\n")
)

await Effect.runPromise(welcome(running))

void running.exited.then(({ code, service }) => shutdown(`${service} exited unexpectedly (${code})`, 1))
