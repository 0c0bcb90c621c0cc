import { randomBytes } from "node:crypto"
import { type ChildProcess, spawn } from "node:child_process"
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { fileURLToPath } from "node:url"
import { type ClusterServer, freePort, jetStreamCluster } from "@portfolio/platform/testing"
import { assertFreshBundles } from "../../deploy/local/compiledBuild.js"
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../../deploy/local/embeddedPostgres.js"
import { type ServiceProcess, spawnService } from "../../deploy/local/serviceProcess.js"
import {
  accepting,
  commonEnvironment,
  type ListenPorts,
  localSigningKeys,
  probedUrls,
  type ServiceAddresses,
  serviceEnvironment,
  type ServiceName,
  ServiceNames,
  writeLocalEnv
} from "../../deploy/local/system.js"
import { loadBalancerConfig, StreamModule, type Upstream } from "./loadBalancer.js"

/**
 * A production cluster's shape on one machine (docs/architecture.md, "Replicas and faults"): three
 * nats-servers clustered with JetStream, every stream and bucket at three replicas; PostgreSQL
 * (embedded, so that it can be restarted without touching the machine's); `replicas` processes of
 * every service from the compiled bundles; nginx in front, an ingress for the gateways and a
 * Service for every other port, through which the services reach each other too.
 */
export interface ClusterOptions {
  readonly replicas?: number
  /** Every service's extra settings (RATE_LIMIT_PER_MINUTE, WEBHOOK_RETRY_SCHEDULE...). */
  readonly env?: Readonly<Record<string, string>>
  /** Kept after `stop()` when given; a temporary folder otherwise. */
  readonly workDir?: string
  /** The checkout every replica starts from (another version's, for a rolling upgrade); this one by default. */
  readonly root?: string
  /** Settings a version other than this one needs in place of this one's. */
  readonly envOf?: (root: string, nats: { readonly urls: string }) => Readonly<Record<string, string>>
  readonly onLog?: (source: string, line: string) => void
  /** Once aborted, no process is started any more (a start under way fails, and stops what it started). */
  readonly signal?: AbortSignal
}

/** One process of a service, on ports of its own that the load balancer knows. */
/** The chart's `migrations.backoffLimit`. */
const MigrationsBackoffLimit = 3

export interface Replica {
  readonly service: ServiceName
  readonly index: number
  readonly name: string
  readonly listen: ListenPorts
  readonly running: boolean
  readonly pid: number
  /** The checkout it runs from: this one, or another version's (a rolling upgrade). */
  readonly root: string
  /** kill -9; resolves once it is gone. */
  readonly kill: () => Promise<void>
  /** SIGTERM, as Kubernetes stops a pod; resolves once it has exited. */
  readonly stop: () => Promise<void>
  /** Starts it again on the same ports, from `root` (default: the one it ran from); resolves once ready. */
  readonly start: (root?: string) => Promise<void>
}

export interface RunningCluster {
  /** The ingress: `gatewayUrl` + `/api/v1`. */
  readonly baseUrl: string
  readonly gatewayUrl: string
  readonly addresses: ServiceAddresses
  /** What a CLI process needs to reach the cluster (as `npm start`'s local.env). */
  readonly cliEnv: Readonly<Record<string, string>>
  readonly workDir: string
  readonly nats: { readonly servers: ReadonlyArray<ClusterServer>; readonly urls: string }
  readonly postgres: { readonly url: string; readonly restart: (downMs?: number) => Promise<void> }
  readonly replicas: ReadonlyArray<Replica>
  readonly replicasOf: (service: ServiceName) => ReadonlyArray<Replica>
  /**
   * The migrations of the version at `root`, as the chart's Job applies them before an upgrade:
   * each service once with `MIGRATIONS=only`, which applies its schema's and exits.
   */
  readonly migrate: (root: string) => Promise<void>
  /** The ingress's access log. */
  readonly accessLog: () => string
  /** SIGTERM to every process, each waited for (30 s, then SIGKILL); nothing starts any more. */
  readonly stop: () => Promise<void>
  /** At once and without waiting: SIGKILL to every process it started (PostgreSQL: SIGQUIT, its immediate shutdown). */
  readonly kill: () => void
}

/**
 * Every cluster started and not stopped yet, by its `kill`: when this process exits, however it
 * exits (the end, an uncaught error, a signal's handler), what it started goes with it.
 */
const started = new Set<() => void>()

/** SIGKILL to every process of every cluster not stopped yet: a last resort, which `process.exit` runs too. */
export const killEverythingStarted = () => {
  for (const kill of started) kill()
}
process.on("exit", killEverythingStarted)

const signalQuietly = (pid: number | undefined, signal: NodeJS.Signals) => {
  if (pid === undefined || pid <= 0) return
  try {
    process.kill(pid, signal)
  } catch {
    // Gone already.
  }
}

/** The children of `pid` (nginx's workers), from /proc. */
const childrenOf = (pid: number): ReadonlyArray<number> => {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((id) => id !== "").map(Number)
  } catch {
    return []
  }
}

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const readyTimeoutMs = 120_000

const hasPublicPort = (service: ServiceName) => service !== "webhook-dispatcher"

/** The ports nginx listens on for one service: what the rest of the cluster calls it by. */
const servicePorts = async () =>
  Object.fromEntries(await Promise.all(ServiceNames.map(async (service) => [service, { port: hasPublicPort(service) ? await freePort() : undefined, admin: await freePort() }] as const))) as Record<ServiceName, ListenPorts>

const waitExit = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())))

export const startCluster = async (options: ClusterOptions = {}): Promise<RunningCluster> => {
  if (!existsSync(StreamModule)) throw new Error(`nginx's stream module is missing (${StreamModule}): apt-get install nginx libnginx-mod-stream`)
  const initialRoot = options.root ?? repoRoot
  assertFreshBundles(initialRoot, ServiceNames)
  let natsUrls = ""
  const envOf = (root: string) => (root === repoRoot ? {} : options.envOf?.(root, { urls: natsUrls }) ?? {})
  const count = options.replicas ?? 2
  const temporary = options.workDir === undefined
  const workDir = options.workDir ?? mkdtempSync(`${tmpdir()}/portfolio-cluster-`)
  mkdirSync(`${workDir}/logs`, { recursive: true })
  mkdirSync(`${workDir}/nginx`, { recursive: true })
  // The embedded PostgreSQL runs as `postgres` when this runs as root: it must get through.
  chmodSync(workDir, 0o755)
  const log = (source: string, line: string) => {
    appendFileSync(`${workDir}/logs/${source}.log`, `${line}\n`)
    options.onLog?.(source, line)
  }

  const cleanups: Array<() => Promise<void>> = []
  let closed = false
  const refuseWhenClosed = (what: string) => {
    if (closed || options.signal?.aborted === true) throw new Error(`the cluster is stopping: ${what} is not started`)
  }
  // What `kill` reaches, filled as the processes start.
  const replicas: Array<Replica> = []
  const jobs = new Set<ServiceProcess>()
  let natsServers: ReadonlyArray<ClusterServer> = []
  let nginxPid: number | undefined
  const kill = () => {
    closed = true
    for (const replica of replicas) signalQuietly(replica.pid, "SIGKILL")
    for (const job of jobs) signalQuietly(job.pid, "SIGKILL")
    // SIGKILL reaches a frozen (SIGSTOP) server too.
    for (const server of natsServers) signalQuietly(server.pid, "SIGKILL")
    if (nginxPid !== undefined) for (const pid of [...childrenOf(nginxPid), nginxPid]) signalQuietly(pid, "SIGKILL")
    const postmaster = `${workDir}/postgres/postmaster.pid`
    if (existsSync(postmaster)) signalQuietly(Number.parseInt(readFileSync(postmaster, "utf8").split("\n")[0] ?? "", 10), "SIGQUIT")
  }
  started.add(kill)
  const stop = async () => {
    closed = true
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined)
    started.delete(kill)
    if (temporary) rmSync(workDir, { recursive: true, force: true })
  }

  try {
    const nats = await jetStreamCluster(`${workDir}/nats`, 3)
    cleanups.push(nats.stop)
    natsUrls = nats.urls
    natsServers = nats.servers

    const postgresPort = await freePort()
    refuseWhenClosed("PostgreSQL")
    let database: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir: workDir, port: postgresPort, onLog: (line) => log("postgres", line) })
    cleanups.push(() => database.stop())
    const restartPostgres = async (downMs = 0) => {
      await database.stop()
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs))
      refuseWhenClosed("PostgreSQL")
      database = await startEmbeddedPostgres({ dataDir: workDir, port: postgresPort, onLog: (line) => log("postgres", line) })
    }

    const front = await servicePorts()
    const edgePort = front.gateway.port!
    const local = (port: number | undefined) => `http://127.0.0.1:${port}`
    const addresses: ServiceAddresses = {
      serviceUrls: { gateway: local(edgePort), referential: local(front.referential.port), provisioning: local(front.provisioning.port), console: local(front.console.port) },
      adminUrls: Object.fromEntries(ServiceNames.map((service) => [service, local(front[service].admin)])) as Record<ServiceName, string>,
      consoleUrl: `${local(front.console.port)}/console`,
      gatewayPort: edgePort
    }
    const secret = randomBytes(32).toString("hex")
    const shared = {
      // Every gateway signs and checks partner tokens with the same keys.
      OAUTH_SIGNING_KEYS: localSigningKeys(),
      NATS_REPLICAS: "3",
      GATEWAY_REPLICAS: String(count),
      // The ingress is the one proxy in front of the gateways and the console.
      TRUSTED_PROXY_HOPS: "1",
      // Every gateway of a deployment publishes the same base: partner tokens' issuer and audience.
      PUBLIC_BASE_URL: `${addresses.serviceUrls.gateway}/api/v1`,
      ...options.env
    }
    const common = commonEnvironment(shared, { databaseUrl: database.url, natsUrl: nats.urls, secret })
    const cliEnv = {
      INTERNAL_SECRET: secret,
      GATEWAY_URL: addresses.serviceUrls.gateway,
      GATEWAY_ADMIN_URL: addresses.adminUrls.gateway,
      PROVISIONING_ADMIN_URL: addresses.adminUrls.provisioning,
      REFERENTIAL_ADMIN_URL: addresses.adminUrls.referential,
      WEBHOOK_ADMIN_URL: addresses.adminUrls["webhook-dispatcher"],
      CONSOLE_ADMIN_URL: addresses.adminUrls.console,
      DATABASE_URL: database.url,
      NATS_URL: nats.urls,
      DATA_DIR: workDir
    }
    writeLocalEnv(workDir, cliEnv)

    const environments = new Map<ServiceName, Record<string, string>>()
    for (const service of ServiceNames) {
      for (let index = 1; index <= count; index++) {
        const listen: ListenPorts = { ...(hasPublicPort(service) ? { port: await freePort() } : {}), admin: await freePort() }
        const name = `${service}-${index}`
        let current: ServiceProcess | undefined
        let root = initialRoot
        const env = { ...common, SERVICE_NAME: service, ...serviceEnvironment(service, listen, addresses, shared) }
        const readyUrls = probedUrls(service, { ...(listen.port === undefined ? {} : { service: local(listen.port) }), admin: local(listen.admin) })
        environments.set(service, env)
        const replica: Replica = {
          service,
          index,
          name,
          listen,
          get running() {
            return current !== undefined
          },
          get pid() {
            return current?.pid ?? 0
          },
          get root() {
            return root
          },
          kill: async () => {
            const process = current
            if (process === undefined) return
            globalThis.process.kill(process.pid, "SIGKILL")
            await process.exited
            current = undefined
          },
          stop: async () => {
            const process = current
            if (process === undefined) return
            await process.stop(30_000)
            current = undefined
          },
          start: async (from = root) => {
            if (current !== undefined) throw new Error(`${name} is running`)
            refuseWhenClosed(name)
            root = from
            log(name, `--- started from ${from}`)
            current = spawnService({ name: service, cwd: from, env: { ...env, ...envOf(from) }, compiled: true, onLine: (line) => log(name, line) })
            await current.ready(readyUrls, readyTimeoutMs)
            if (service === "gateway") await accepting(local(listen.port), readyTimeoutMs)
          }
        }
        replicas.push(replica)
      }
    }
    cleanups.push(() => Promise.all(replicas.map((replica) => replica.stop())).then(() => undefined))

    const upstream = (service: ServiceName, kind: "port" | "admin"): Upstream => ({
      name: `${service.replace("-", "_")}_${kind}`,
      listen: front[service][kind]!,
      replicas: replicas.filter((replica) => replica.service === service).map((replica) => replica.listen[kind]!)
    })
    const prefix = `${workDir}/nginx`
    writeFileSync(`${prefix}/nginx.conf`, loadBalancerConfig({
      prefix,
      edge: upstream("gateway", "port"),
      services: ServiceNames.flatMap((service) => [...(hasPublicPort(service) && service !== "gateway" ? [upstream(service, "port")] : []), upstream(service, "admin")])
    }))
    refuseWhenClosed("nginx")
    const nginx = spawn("nginx", ["-c", `${prefix}/nginx.conf`, "-p", prefix], { stdio: ["ignore", "pipe", "pipe"] })
    nginxPid = nginx.pid
    nginx.stderr!.on("data", (chunk: Buffer) => log("nginx", chunk.toString("utf8").trimEnd()))
    cleanups.push(async () => {
      nginx.kill("SIGTERM")
      await waitExit(nginx)
    })
    for (const port of [edgePort, front.referential.admin]) await accepting(local(port), 10_000)

    // The first of each service alone first: it applies its migrations and creates its streams
    // and buckets, which the others then find (no two replicas race to create them).
    await Promise.all(ServiceNames.map((service) => replicas.find((replica) => replica.service === service)!.start()))
    await Promise.all(replicas.filter((replica) => replica.index > 1).map((replica) => replica.start()))

    return {
      baseUrl: `${addresses.serviceUrls.gateway}/api/v1`,
      gatewayUrl: addresses.serviceUrls.gateway,
      addresses,
      cliEnv,
      workDir,
      nats: { servers: nats.servers, urls: nats.urls },
      postgres: { url: database.url, restart: restartPostgres },
      replicas,
      replicasOf: (service) => replicas.filter((replica) => replica.service === service),
      // As the chart's migrations Job: a pod that fails is run again, up to its backoffLimit (3). A
      // CREATE INDEX beside the previous version's replicas at work may lose a deadlock to them.
      migrate: async (root) => {
        for (const service of ServiceNames) {
          for (let attempt = 1; ; attempt++) {
            refuseWhenClosed(`the migrations of ${service}`)
            const job = spawnService({
              name: service,
              cwd: root,
              env: { ...environments.get(service)!, ...envOf(root), MIGRATIONS: "only" },
              compiled: true,
              onLine: (line) => log(`${service}-migrations`, line)
            })
            jobs.add(job)
            const code = await job.exited
            jobs.delete(job)
            if (code === 0) break
            if (attempt > MigrationsBackoffLimit) throw new Error(`the migrations of ${service} (${root}) exited ${code} ${attempt} times: see ${workDir}/logs/${service}-migrations.log`)
          }
        }
      },
      accessLog: () => (existsSync(`${prefix}/access.log`) ? readFileSync(`${prefix}/access.log`, "utf8") : ""),
      stop,
      kill
    }
  } catch (error) {
    await stop()
    throw error
  }
}
