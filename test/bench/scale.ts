/**
 * `npm run bench:scale` (issue 29): every public read of the referential at 1x, 10x and 50x the
 * demo tenant (200 / 2,000 / 10,000 applications, 500 / 5,000 / 25,000 functions), through the
 * gateway with a read PAT, one request at a time: steady reads (the cached path) and write-then-read
 * pairs (an application changed through the admin API, then the read: the cold path), with p50,
 * p99, time to first byte and bytes; the PUTs themselves; `changes` over a log of 1,000,000 entries;
 * each service's resident memory around the large reads and with 250 more demo-size tenants read
 * once. Prints each goal of the issue as PASS or FAIL beside its bound. A report, not a test: it
 * exits 0 whatever the figures, 1 only when the bench itself broke (an error status, a service
 * gone). `--quick`: 1x and 10x, fewer samples, no 1,000,000-entry log, 20 extra tenants.
 * `--only=posi,list`: those endpoints only (the keys of `Endpoints`), at every scale, without the
 * 1,000,000-entry log and the extra tenants, and the goals that can be told from them: for working
 * on one read (a minute or two instead of five).
 * `BENCH_NODE_ARGS="--max-old-space-size=1024"`: more options for every service's node (the
 * report says so), for when production's heap cap does not hold the largest tenant.
 * `BENCH_MALLOC_CONF="background_thread:true,dirty_decay_ms:100"`: jemalloc's settings for every
 * service in place of production's (the report says so), for comparing allocator settings.
 * `BENCH_LOG_DIR=<dir>`: each service's output in `<dir>/<service>.log` and every timed read in
 * `<dir>/reads.log`, each line after the time it came (ms since the epoch), for reading a slow read
 * against what a service did then (`BENCH_NODE_ARGS=--trace-gc`).
 * Starts its own processes on a fresh database, as test/bench/run.ts does; not part of `npm test`.
 */
import { FetchHttpClient } from "effect/http"
import { CreatePatRequest, CreateTenantRequest, DemoSeedRequest, GatewayAdminApi, ProvisioningAdminApi, ReferentialAdminApi } from "@portfolio/domain"
import { AssertionHeader, operatorApiClient, operatorIdentity, signAssertion } from "@portfolio/platform/security"
import { createDatabase, parsePrometheusText, sumOf } from "@portfolio/platform/testing"
import { randomBytes } from "node:crypto"
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs"
import http from "node:http"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import pg from "pg"
import { startSystem } from "../../deploy/local/system.js"
import { cliJson } from "../support/cli.js"
import { residentMb } from "../support/cpuTime.js"
import { IdleEntryMs } from "../../services/referential/src/adapters/http/EncodedReadCache.js"

const quick = process.argv.slice(2).includes("--quick")
const only = process.argv.slice(2).find((arg) => arg.startsWith("--only="))?.slice("--only=".length).split(",")

const Scales = [
  { name: "1x", applications: 200, functions: 500 },
  { name: "10x", applications: 2_000, functions: 5_000 },
  { name: "50x", applications: 10_000, functions: 25_000 }
].slice(0, quick ? 2 : 3)
type Scale = (typeof Scales)[number]
const largest = Scales.at(-1)!

const steadySamples = quick ? 10 : 30
const pairSamples = quick ? 6 : 20
/**
 * Per endpoint and scale, once a minimum is taken: a read of several seconds would otherwise take
 * the run far past its 15 minutes. The tables say how many samples were taken when fewer.
 */
const steadyBudget = { minimum: 10, ms: 30_000 }
const pairBudget = { minimum: 5, ms: 30_000 }
const bigLogEntries = 1_000_000
/**
 * A read of the log costs a few milliseconds: enough samples that its p99 is a percentile (the
 * third slowest) rather than the slowest of a handful, which one stall of a shared core decides.
 */
const bigLogSamples = 200
/** Links followed from the first page before the deep page is timed. */
const bigLogDepthPages = 20
const manyTenants = quick ? 20 : 250
const seedConcurrency = 4
const rssSampleMs = 500
/**
 * Longer than the referential's read cache keeps an answer nobody reads (IdleEntryMs, one minute),
 * so that "idle" means what an idle tenant leaves in memory.
 */
const idleMs = IdleEntryMs + 10_000
const watchdogMs = 20 * 60_000
const nodeArgs = (process.env["BENCH_NODE_ARGS"] ?? "").split(/\s+/).filter((arg) => arg !== "")
const mallocConf = process.env["BENCH_MALLOC_CONF"]
const logDir = process.env["BENCH_LOG_DIR"]
const logFiles = new Map<string, WriteStream>()
/** A line of `BENCH_LOG_DIR`'s `file`, after the time it is written. */
const logTo = (file: string, line: string) => {
  if (logDir === undefined) return
  let stream = logFiles.get(file)
  if (stream === undefined) {
    mkdirSync(logDir, { recursive: true })
    stream = createWriteStream(join(logDir, `${file}.log`))
    logFiles.set(file, stream)
  }
  stream.write(`${Date.now()} ${line}\n`)
}

/** The bounds of the issue. */
const Bound = {
  pairP99Ms: 300,
  singleGrowth: 1.5,
  searchP50Ms: 20,
  statsP50Ms: 10,
  ttfbMs: 50,
  putP99Ms: 50,
  bigLogP99Ms: 20,
  peakMb: 256,
  idleMb: 150
}

const log = (line: string) => process.stdout.write(`${line}\n`)
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** The bench broke (as opposed to a goal missed): exit 1. */
class Broken extends Error {}

// ---------------------------------------------------------------------------------------------
// HTTP, timed with node:http: fetch resolves on headers and hides when the body's first bytes
// arrive, which is what "starts at once" is about.

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  /** Request start to the first body chunk, or to the headers when there is no body. */
  readonly ttfbMs: number
  readonly totalMs: number
  /** Body bytes as they came over the wire (compressed when the server chose to). */
  readonly bytes: number
  readonly body: Buffer
}

// One keep-alive connection per upstream, as a client reading one thing at a time holds: a new
// connection per request would time the handshake, not the read.
const readAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const adminAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })

const send = (
  url: string,
  options: { readonly method?: string; readonly headers: Record<string, string>; readonly body?: string; readonly keepBody?: boolean; readonly agent: http.Agent }
) =>
  new Promise<Answer>((resolve, reject) => {
    const start = performance.now()
    const request = http.request(url, { method: options.method ?? "GET", headers: options.headers, agent: options.agent }, (response) => {
      const headersAt = performance.now()
      const status = response.statusCode ?? 0
      // Error bodies are kept to say what broke; large answers are not, so the bench's own heap
      // stays out of the measure.
      const keep = options.keepBody === true || status >= 400
      const chunks: Array<Buffer> = []
      let firstChunkAt: number | undefined
      let bytes = 0
      response.on("data", (chunk: Buffer) => {
        firstChunkAt ??= performance.now()
        bytes += chunk.length
        if (keep) chunks.push(chunk)
      })
      response.on("end", () => {
        const end = performance.now()
        resolve({ status, headers: response.headers, ttfbMs: (firstChunkAt ?? headersAt) - start, totalMs: end - start, bytes, body: Buffer.concat(chunks) })
      })
      response.on("error", reject)
    })
    request.on("error", reject)
    // A read that hangs is a broken bench, not a slow figure: the watchdog would be the only way out.
    request.setTimeout(120_000, () => request.destroy(new Error(`${options.method ?? "GET"} ${url} got no answer in 120 s`)))
    request.end(options.body)
  })

const ok = (answer: Answer, what: string) => {
  if (answer.status >= 300) throw new Broken(`${what} answered ${answer.status}: ${answer.body.toString("utf8").slice(0, 500)}`)
  return answer
}

const nextLink = (answer: Answer, url: string) => {
  const header = answer.headers.link
  const match = header === undefined ? null : /<([^>]*)>\s*;\s*rel="?next"?/.exec(Array.isArray(header) ? header.join(", ") : header)
  return match === null ? undefined : new URL(match[1]!, url).href
}

// ---------------------------------------------------------------------------------------------
// Figures

/** Nearest rank: with 20 or 30 samples, p99 is the slowest one. */
const percentile = (values: ReadonlyArray<number>, q: number) => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}
const ms = (n: number) => (Number.isNaN(n) ? "-" : n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0))
const mb = (n: number) => (Number.isNaN(n) ? "-" : n.toFixed(0))
const thousands = (n: number) => n.toLocaleString("en-US")

interface Timings {
  readonly n: number
  readonly p50: number
  readonly p99: number
  readonly ttfbP50: number
}
const timings = (answers: ReadonlyArray<Pick<Answer, "totalMs" | "ttfbMs">>): Timings => ({
  n: answers.length,
  p50: percentile(answers.map((a) => a.totalMs), 0.5),
  p99: percentile(answers.map((a) => a.totalMs), 0.99),
  ttfbP50: percentile(answers.map((a) => a.ttfbMs), 0.5)
})

/** Up to `count` samples, fewer once `budget.ms` is spent and `budget.minimum` taken. */
const sampled = async <A>(count: number, budget: { readonly minimum: number; readonly ms: number }, take: () => Promise<A>) => {
  const start = performance.now()
  const samples: Array<A> = []
  while (samples.length < count && (samples.length < budget.minimum || performance.now() - start < budget.ms)) samples.push(await take())
  return samples
}

/** Resident memory of every service, sampled every 500 ms between start and stop; the peak of each. */
const rssSampler = (processes: ReadonlyArray<{ readonly service: string; readonly pid: number }>) => {
  const now = () => Object.fromEntries(processes.map(({ pid, service }) => [service, safeRss(pid)]))
  let peak: Record<string, number> = {}
  let lapPeak: Record<string, number> = {}
  let timer: NodeJS.Timeout | undefined
  const sample = () => {
    for (const [service, value] of Object.entries(now())) {
      peak[service] = Math.max(peak[service] ?? 0, value)
      lapPeak[service] = Math.max(lapPeak[service] ?? 0, value)
    }
  }
  return {
    now,
    /** The peak of each since the last lap (or start), and a new lap from here. */
    lap: (): Record<string, number> => {
      sample()
      const was = lapPeak
      lapPeak = {}
      return was
    },
    start: () => {
      peak = {}
      lapPeak = {}
      sample()
      timer = setInterval(sample, rssSampleMs)
    },
    stop: (): Record<string, number> => {
      clearInterval(timer)
      sample()
      return peak
    }
  }
}
const safeRss = (pid: number) => {
  try {
    return residentMb(pid)
  } catch {
    // The process is gone: the service crashed, which the next request reports as broken.
    return Number.NaN
  }
}
/** What the referential's read cache holds per share, MB. */
interface CacheHeld {
  readonly answers: number
  readonly fragments: number
}
/** CacheHeld, from the referential's metrics (docs/observability.md). */
const readCacheHeld = async (adminUrl: string): Promise<CacheHeld> => {
  const families = parsePrometheusText(await (await fetch(`${adminUrl}/metrics`)).text())
  const held = (share: string) => sumOf(families, "portfolio_referential_read_cache_size_bytes", { share }) / (1024 * 1024)
  return { answers: held("answers"), fragments: held("fragments") }
}
const rssLine = (values: Record<string, number>) => Object.entries(values).map(([service, value]) => `${service} ${mb(value)}`).join(", ")

// ---------------------------------------------------------------------------------------------
// The endpoints

interface TenantData {
  readonly scale: Scale
  readonly slug: string
  readonly tenantId: string
  readonly token: string
  readonly applications: ReadonlyArray<{ readonly code: string; readonly name: string }>
  readonly functionIds: ReadonlyArray<string>
  /** Which of two descriptions each application was last given, so that every PUT changes it. */
  readonly flipped: Map<string, boolean>
  cursor: number
}

interface Endpoint {
  readonly key: string
  readonly title: string
  /** The path read by steady reads, and by the pair that just changed application `code` and reads function `id`. */
  readonly path: (t: TenantData, item?: { readonly code: string; readonly id: string }) => string
  readonly large: boolean
}

const middle = <A>(items: ReadonlyArray<A>) => items[Math.floor(items.length / 2)]!
const app = (t: TenantData, item?: { readonly code: string }) => encodeURIComponent(item?.code ?? middle(t.applications).code)
const fn = (t: TenantData, item?: { readonly id: string }) => encodeURIComponent(item?.id ?? middle(t.functionIds))

const AllEndpoints: ReadonlyArray<Endpoint> = [
  { key: "list", title: "applications, whole list", path: () => "/referentiel/applications", large: true },
  { key: "listPage", title: "applications, first page (limit=100)", path: () => "/referentiel/applications?limit=100", large: false },
  { key: "application", title: "one application", path: (t, i) => `/referentiel/applications/${app(t, i)}`, large: false },
  { key: "changes", title: "change log of one application", path: (t, i) => `/referentiel/applications/${app(t, i)}/changes`, large: false },
  { key: "tree", title: "function tree", path: () => "/referentiel/functions", large: true },
  { key: "flat", title: "functions, flat list", path: () => "/referentiel/functions/flat", large: true },
  { key: "posi", title: "posi tree", path: () => "/referentiel/functions/posi", large: true },
  { key: "search", title: "search q=pay, whole", path: () => "/referentiel/functions/search?q=pay", large: true },
  { key: "searchPage", title: "search q=pay, first page (limit=100)", path: () => "/referentiel/functions/search?q=pay&limit=100", large: false },
  { key: "stats", title: "statistics", path: () => "/referentiel/functions/stats", large: false },
  { key: "byApplication", title: "functions of one application", path: (t, i) => `/referentiel/functions/by-application/${app(t, i)}`, large: false },
  { key: "function", title: "one function", path: (t, i) => `/referentiel/functions/${fn(t, i)}`, large: false }
]
const unknown = (only ?? []).filter((key) => !AllEndpoints.some((e) => e.key === key))
if (unknown.length > 0 || only?.length === 0) throw new Error(`--only takes keys among ${AllEndpoints.map((e) => e.key).join(", ")}; not ${unknown.join(", ")}`)
const Endpoints = only === undefined ? AllEndpoints : AllEndpoints.filter((e) => only.includes(e.key))
/** Whether the run measures every endpoint key of `keys`. */
const measures = (...keys: ReadonlyArray<string>) => keys.every((key) => Endpoints.some((e) => e.key === key))
const singleThings = ["application", "function", "byApplication", "changes"].filter((key) => measures(key))

interface EndpointFigures {
  readonly steady: Timings
  readonly pairs: Timings
  readonly bytes: number
  readonly encoding: string
  readonly identityBytes: number
  readonly items?: number
  readonly nextLink?: boolean
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const benchStart = performance.now()
  const secret = randomBytes(32).toString("hex")
  const database = await createDatabase("scale")
  let system: Awaited<ReturnType<typeof startSystem>> | undefined
  let stopping = false
  const cleanup = async () => {
    stopping = true
    await system?.stop()
    await database.drop()
  }
  // The bench is bounded: a read or a seed that hangs must not hold two shared cores for ever.
  const watchdog = setTimeout(() => {
    log(`watchdog: the bench ran for ${watchdogMs / 60_000} minutes; stopping the system`)
    void cleanup().finally(() => process.exit(1))
  }, watchdogMs)
  watchdog.unref()
  const interrupted = () => void cleanup().finally(() => process.exit(130))
  process.once("SIGINT", interrupted)
  process.once("SIGTERM", interrupted)
  /** The last lines of each service, to say why one died: the bench runs them quiet. */
  const lastLines = new Map<string, Array<string>>()
  const phases: Array<[string, number]> = []
  const phase = async <A>(name: string, run: () => Promise<A>): Promise<A> => {
    const start = performance.now()
    logTo("reads", `phase ${name} starts`)
    const result = await run()
    phases.push([name, performance.now() - start])
    logTo("reads", `phase ${name} ends`)
    return result
  }

  try {
    log(`bench:scale${quick ? " --quick" : ""}${only === undefined ? "" : ` --only=${only.join(",")}`}: ${Scales.map((s) => s.name).join(", ")}; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`)
    if (nodeArgs.length > 0) log(`every service's node also runs with ${nodeArgs.join(" ")} (BENCH_NODE_ARGS)`)
    if (mallocConf !== undefined) log(`every service runs with MALLOC_CONF=${mallocConf} (BENCH_MALLOC_CONF)`)
    log(`starting the system on database ${database.name} ...`)
    const running = await phase("start the system", () =>
      startSystem({
        databaseUrl: database.url,
        quiet: true,
        compiled: true,
        // The limiter stays on, far from its limit; the bench is one client reading in sequence.
        env: { INTERNAL_SECRET: secret, RATE_LIMIT_PER_MINUTE: "100000000", LOG_LEVEL: "Warn", ...(mallocConf === undefined ? {} : { MALLOC_CONF: mallocConf }) },
        ...(nodeArgs.length === 0 ? {} : { nodeArgs }),
        onLog: (service, line) => {
          logTo(service, line)
          // A crash's native stack says nothing here and would push its reason out.
          if (line.trim() === "" || /^\s*\d+: 0x[0-9a-f]+ /.test(line)) return
          const lines = lastLines.get(service) ?? []
          lines.push(line)
          lastLines.set(service, lines.slice(-12))
        }
      }))
    system = running
    void running.exited.then(({ code, service }) => {
      if (stopping) return
      log(`!! ${service} exited with code ${code} during the bench; its last lines:`)
      for (const line of lastLines.get(service) ?? []) log(`!!   ${line}`)
    })
    const env = { ...running.env, INTERNAL_SECRET: secret }
    const gateway = running.baseUrl.replace("localhost", "127.0.0.1")
    const referentialAdmin = running.adminUrls.referential.replace("localhost", "127.0.0.1")
    const sampler = rssSampler(running.processes)
    const operatorName = "operator:bench-scale"
    const operator = operatorIdentity(operatorName)
    // The admin calls the CLI makes, made in this process: a CLI start costs about as much CPU as
    // seeding a demo-size tenant, and the 250 tenants took over 7 minutes through it (4 at a time).
    // The three scale tenants are seeded through the CLI, as an operator would.
    const admin = await Effect.runPromise(
      Effect.all({
        provisioning: operatorApiClient(ProvisioningAdminApi)({ baseUrl: running.adminUrls.provisioning, secret, operator: operatorName }),
        gateway: operatorApiClient(GatewayAdminApi)({ baseUrl: running.adminUrls.gateway, secret, operator: operatorName }),
        referential: operatorApiClient(ReferentialAdminApi)({ baseUrl: running.adminUrls.referential, secret, operator: operatorName })
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )

    const read = (t: { readonly token: string }, path: string, options: { readonly encoding?: string; readonly keepBody?: boolean } = {}) =>
      send(`${gateway}${path}`, {
        headers: { authorization: `Bearer ${t.token}`, "accept-encoding": options.encoding ?? "gzip, br" },
        agent: readAgent,
        ...(options.keepBody === undefined ? {} : { keepBody: options.keepBody })
      }).then((answer) => {
        logTo("reads", `${answer.totalMs.toFixed(2)} ms ${answer.status} ${path}`)
        return ok(answer, `GET ${path}`)
      })

    /** A write-then-read pair: one application changed, then `endpoint` read (the function it names chosen by the cursor). */
    const pairRead = async (t: TenantData, endpoint: Endpoint) => {
      const changed = await changeOne(t)
      const id = t.functionIds[(t.cursor * 104_729) % t.functionIds.length]!
      return { put: changed.answer, read: await read(t, endpoint.path(t, { code: changed.code, id })) }
    }

    /** The admin PUT of one application, only its description changed (not an audited field: the change log stays as seeded). */
    const changeOne = async (t: TenantData) => {
      const application = t.applications[(t.cursor++ * 7919) % t.applications.length]!
      const flip = !(t.flipped.get(application.code) ?? false)
      t.flipped.set(application.code, flip)
      const url = new URL(`${referentialAdmin}/admin/tenants/${t.tenantId}/applications/${encodeURIComponent(application.code)}`)
      const body = JSON.stringify({ name: application.name, description: `bench:scale description ${flip ? "A" : "B"}` })
      const assertion = signAssertion(secret, operator, { audience: "referential", method: "PUT", target: `${url.pathname}${url.search}`, body })
      const answer = ok(
        await send(url.href, { method: "PUT", headers: { "content-type": "application/json", [AssertionHeader]: assertion }, body, agent: adminAgent }),
        `PUT ${url.pathname}`
      )
      return { code: application.code, answer }
    }

    const createTenant = async (slug: string, scale: Scale, seedWith: "cli" | "admin api") => {
      const { admin: member, tenant } = await Effect.runPromise(
        admin.provisioning.provisioningAdmin.createTenant({ payload: new CreateTenantRequest({ slug, adminEmail: `admin@${slug}.example` }) })
      )
      const pat = await Effect.runPromise(
        admin.gateway.gatewayAdmin.createPat({
          payload: new CreatePatRequest({ tenantId: tenant.id, userSub: member.userSub, email: member.userEmail, role: member.arbRole, scope: "read" })
        })
      )
      const seedStart = performance.now()
      const seeded = seedWith === "cli"
        ? await cliJson(["seed", "demo", "--tenant", slug, "--applications", String(scale.applications), "--functions", String(scale.functions)], { env })
        : await Effect.runPromise(
          admin.referential.referentialAdmin.seedDemo({
            params: { tenantId: tenant.id },
            payload: new DemoSeedRequest({ applications: scale.applications, functions: scale.functions })
          })
        )
      if (seeded.applications !== scale.applications || seeded.functions !== scale.functions) {
        throw new Broken(`seed of ${slug} made ${seeded.applications} applications and ${seeded.functions} functions`)
      }
      return { tenantId: tenant.id, token: pat.token, seedMs: performance.now() - seedStart, links: Number(seeded.links) }
    }

    // -- The three tenants
    const tenants: Array<TenantData> = []
    await phase("create and seed the scale tenants", async () => {
      for (const scale of Scales) {
        const slug = `scale-${scale.name}`
        const created = await createTenant(slug, scale, "cli")
        const listed = JSON.parse((await read(created, "/referentiel/applications", { encoding: "identity", keepBody: true })).body.toString("utf8")) as Array<{ code: string; name: string }>
        const flat = JSON.parse((await read(created, "/referentiel/functions/flat", { encoding: "identity", keepBody: true })).body.toString("utf8")) as Array<{ id: string }>
        if (listed.length !== scale.applications || flat.length !== scale.functions) {
          throw new Broken(`${slug} lists ${listed.length} applications and ${flat.length} functions`)
        }
        tenants.push({
          scale,
          slug,
          tenantId: created.tenantId,
          token: created.token,
          applications: listed.map(({ code, name }) => ({ code, name })),
          functionIds: flat.map((f) => f.id),
          flipped: new Map(),
          cursor: 0
        })
        log(`  ${slug}: ${thousands(scale.applications)} applications, ${thousands(scale.functions)} functions, ${thousands(created.links)} links, seeded in ${seconds(created.seedMs)}`)
      }
    })

    // -- Every endpoint at every scale
    const figures = new Map<string, Map<string, EndpointFigures>>(Endpoints.map((e) => [e.key, new Map()]))
    const puts = new Map<string, Timings>()
    const memory = new Map<string, { before: Record<string, number>; peak: Record<string, number>; after: Record<string, number> }>()
    /** Each service's peak while each endpoint was read, by scale: where a service's growth came from. */
    const endpointPeaks = new Map<string, Array<readonly [string, Record<string, number>]>>()
    /** What the read cache held before and after each scale's reads: the part of the growth it keeps on purpose. */
    const cacheHeld = new Map<string, { readonly before: CacheHeld; readonly after: CacheHeld }>()
    for (const t of tenants) {
      await phase(`reads at ${t.scale.name}`, async () => {
        log(`measuring ${t.scale.name} (${Endpoints.length} endpoints, ${steadySamples} steady reads and ${pairSamples} write-then-read pairs each) ...`)
        const putTimes: Array<Answer> = []
        const before = sampler.now()
        const cacheBefore = await readCacheHeld(referentialAdmin)
        sampler.start()
        const peaks: Array<readonly [string, Record<string, number>]> = []
        for (const endpoint of Endpoints) {
          const path = endpoint.path(t)
          const counted = endpoint.key === "search" || endpoint.key === "searchPage"
          const identity = await read(t, path, { encoding: "identity", keepBody: counted })
          const warm = await read(t, path)
          const steady = await sampled(steadySamples, steadyBudget, () => read(t, path))
          const pairs = await sampled(pairSamples, pairBudget, async () => {
            const pair = await pairRead(t, endpoint)
            putTimes.push(pair.put)
            return pair.read
          })
          figures.get(endpoint.key)!.set(t.scale.name, {
            steady: timings(steady),
            pairs: timings(pairs),
            bytes: percentile(steady.map((a) => a.bytes), 0.5),
            encoding: String(warm.headers["content-encoding"] ?? "identity"),
            identityBytes: identity.bytes,
            ...(counted ? { items: (JSON.parse(identity.body.toString("utf8")) as Array<unknown>).length, nextLink: nextLink(identity, `${gateway}${path}`) !== undefined } : {})
          })
          peaks.push([endpoint.key, sampler.lap()])
        }
        endpointPeaks.set(t.scale.name, peaks)
        memory.set(t.scale.name, { before, peak: sampler.stop(), after: sampler.now() })
        cacheHeld.set(t.scale.name, { before: cacheBefore, after: await readCacheHeld(referentialAdmin) })
        puts.set(t.scale.name, timings(putTimes))
      })
    }

    // -- Reads of one thing at the smallest and the largest scale, alternated
    // Whether such a read grows with the tenant is told from samples taken turn about: measured a
    // scale at a time, half a minute apart, the same read's p50 at 1x alone ranged 2.45 to 5.05 ms
    // across runs (what else the two cores did then), and its ratio to 50x with it.
    const alternated = new Map<string, { readonly steady: readonly [Timings, Timings]; readonly pairs: readonly [Timings, Timings] }>()
    const [smallest, biggest] = [tenants[0]!, tenants.at(-1)!]
    if (singleThings.length > 0 && smallest !== biggest) {
      await phase(`one thing at ${smallest.scale.name} and ${biggest.scale.name}, alternated`, async () => {
        for (const key of singleThings) {
          const endpoint = Endpoints.find((e) => e.key === key)!
          const steady: readonly [Array<Answer>, Array<Answer>] = [[], []]
          const pairs: readonly [Array<Answer>, Array<Answer>] = [[], []]
          const both = [smallest, biggest] as const
          for (const t of both) await read(t, endpoint.path(t))
          for (let i = 0; i < steadySamples; i++) for (const [j, t] of both.entries()) steady[j]!.push(await read(t, endpoint.path(t)))
          for (let i = 0; i < pairSamples; i++) for (const [j, t] of both.entries()) pairs[j]!.push((await pairRead(t, endpoint)).read)
          alternated.set(key, { steady: [timings(steady[0]), timings(steady[1])], pairs: [timings(pairs[0]), timings(pairs[1])] })
        }
      })
    }

    // -- A change log of 1,000,000 entries
    let bigLog: { first: Timings; deep: Timings; floor: Timings; depth: number; insertMs: number } | undefined
    if (!quick && only === undefined) {
      bigLog = await phase("1,000,000-entry change log", async () => {
        const t = tenants.at(-1)!
        const code = t.applications[1]!.code
        log(`inserting ${thousands(bigLogEntries)} change-log entries for ${code} of ${t.slug} ...`)
        const insertStart = performance.now()
        const client = new pg.Client({ connectionString: database.url })
        await client.connect()
        try {
          // Whole seconds apart, older than anything written today: the cursor carries milliseconds,
          // so entries must not share a millisecond the way rows written in one statement would.
          await client.query(
            `INSERT INTO referential.application_changes (id, tenant_id, application_code, field, old_value, new_value, changed_by, changed_at)
             SELECT gen_random_uuid(), $1, $2, 'status',
                    CASE WHEN g % 2 = 0 THEN 'ACTIVE' ELSE 'DEPRECATED' END,
                    CASE WHEN g % 2 = 0 THEN 'DEPRECATED' ELSE 'ACTIVE' END,
                    'operator:bench-scale', date_trunc('second', now()) - make_interval(days => 1, secs => g)
             FROM generate_series(1, $3::int) AS g`,
            [t.tenantId, code, bigLogEntries]
          )
          // Vacuumed as well as analysed: a million rows inserted at once cross autovacuum's insert
          // threshold, and its vacuum of them could come while the reads are timed, which a log that
          // grew over years does not wait for. The insert's own dirty pages written out now rather
          // than by the checkpointer while the reads are timed, for the same reason. With the
          // checkpoint, the statement alone at p99 1.5 and 1.8 ms in two runs, against 4.6 without.
          await client.query("VACUUM (ANALYZE) referential.application_changes")
          await client.query("CHECKPOINT")
        } finally {
          await client.end()
        }
        const insertMs = performance.now() - insertStart
        const firstUrl = `/referentiel/applications/${encodeURIComponent(code)}/changes`
        // Without `limit` or `cursor` a list sends no Link: the walk starts with the default page size.
        let deepUrl = `${gateway}${firstUrl}?limit=50`
        let depth = 0
        for (let i = 0; i < bigLogDepthPages; i++) {
          const page = await send(deepUrl, { headers: { authorization: `Bearer ${t.token}`, "accept-encoding": "gzip, br" }, agent: readAgent })
          ok(page, `GET ${deepUrl}`)
          const next = nextLink(page, deepUrl)
          if (next === undefined) throw new Broken(`the change log of ${code} has no next page after ${depth} pages`)
          deepUrl = next
          depth++
        }
        const timed = async (path: string) => {
          await read(t, path)
          const answers: Array<Answer> = []
          for (let i = 0; i < bigLogSamples; i++) answers.push(await read(t, path))
          return timings(answers)
        }
        const deepPath = deepUrl.slice(gateway.length)
        const first = await timed(firstUrl)
        const deep = await timed(deepPath)
        // The floor under both: the first page's statement as the referential sends it
        // (ApplicationRepositoryPg's `listChanges`), straight to PostgreSQL over one connection, as
        // many times. What the machine's scheduling adds to any round trip shows here.
        const floorClient = new pg.Client({ connectionString: database.url })
        await floorClient.connect()
        const statement = async () => {
          const start = performance.now()
          await floorClient.query(
            `SELECT c.id, c.application_code, c.field, c.old_value, c.new_value, c.changed_by,
               floor(extract(epoch FROM c.changed_at) * 1000)::bigint AS changed_at_ms
             FROM referential.applications a
             LEFT JOIN LATERAL (
               SELECT e.id, e.application_code, e.field, e.old_value, e.new_value, e.changed_by, e.changed_at, e.seq
               FROM referential.application_changes e
               WHERE e.tenant_id = $1 AND e.application_code = $2
               ORDER BY e.changed_at DESC, e.seq DESC
               LIMIT 50
             ) c ON true
             WHERE a.tenant_id = $1 AND a.code = $2
             ORDER BY c.changed_at DESC, c.seq DESC`,
            [t.tenantId, code]
          )
          const totalMs = performance.now() - start
          return { totalMs, ttfbMs: totalMs }
        }
        try {
          await statement()
          const floor: Array<{ totalMs: number; ttfbMs: number }> = []
          for (let i = 0; i < bigLogSamples; i++) floor.push(await statement())
          return { first, deep, floor: timings(floor), depth, insertMs }
        } finally {
          await floorClient.end()
        }
      })
    }

    // -- Many tenants beside the big one
    const many = only !== undefined ? undefined : await phase(`${manyTenants} demo-size tenants`, async () => {
      log(`creating and seeding ${manyTenants} demo-size tenants, ${seedConcurrency} at a time ...`)
      const small = { name: "1x", applications: 200, functions: 500 }
      const created: Array<{ token: string }> = []
      let next = 0
      const seedStart = performance.now()
      await Promise.all(Array.from({ length: seedConcurrency }, async () => {
        while (next < manyTenants) {
          const i = next++
          created.push(await createTenant(`scale-many-${String(i).padStart(3, "0")}`, small, "admin api"))
        }
      }))
      const seedMs = performance.now() - seedStart
      log(`  seeded in ${seconds(seedMs)}; reading each one's tree, posi and application list once ...`)
      const before = sampler.now()
      sampler.start()
      const readStart = performance.now()
      for (const t of created) {
        for (const path of ["/referentiel/functions", "/referentiel/functions/posi", "/referentiel/applications"]) await read(t, path)
      }
      const readMs = performance.now() - readStart
      const peak = sampler.stop()
      log(`  read in ${seconds(readMs)}; ${idleMs / 1000} s idle ...`)
      await new Promise((resolve) => setTimeout(resolve, idleMs))
      return { seedMs, readMs, before, peak, idle: sampler.now() }
    })

    // -- Report
    const names = Scales.map((s) => s.name)
    // Wide enough for "1,191,666 br / 8,318,978"; a space before each cell all the same, so that
    // a wider figure never runs into its neighbour.
    const width = 27
    const row = (label: string, cells: ReadonlyArray<string>) => log(`  ${label.padEnd(26)}${cells.map((c) => ` ${c}`.padStart(width)).join("")}`)
    log("")
    log(`${cpus().length} cores; load average ${loadavg().map((n) => n.toFixed(1)).join(" ")} (1, 5, 15 min) at the end of the run`)
    log(`through the gateway with a read PAT, one request at a time over one keep-alive connection, Accept-Encoding: gzip, br`)
    log(`steady: ${steadySamples} reads after one warm-up; pairs: ${pairSamples} x (admin PUT of one application's description, then the read)`)
    log(`  (n=...: fewer samples, the endpoint's ${steadyBudget.ms / 1000} s budget spent); p99 is the slowest sample at these counts`)
    log(`TTFB: request start to the first body chunk; bytes: on the wire (coding) / identity`)
    log(`services' node options: ${nodeArgs.length === 0 ? "production's" : `production's + ${nodeArgs.join(" ")} (BENCH_NODE_ARGS), not production's`}`)
    log(`services' allocator settings: ${mallocConf === undefined ? "production's" : `MALLOC_CONF=${mallocConf} (BENCH_MALLOC_CONF), not production's`}`)
    for (const endpoint of Endpoints) {
      const byScale = figures.get(endpoint.key)!
      const cell = (f: (x: EndpointFigures) => string) => names.map((n) => f(byScale.get(n)!))
      log("")
      log(`${endpoint.title}: GET /api/v1${endpoint.path(tenants[0]!)}`)
      row("", names)
      const count = (t: Timings, planned: number) => (t.n < planned ? ` (n=${t.n})` : "")
      row("steady p50 / p99 ms", cell((x) => `${ms(x.steady.p50)} / ${ms(x.steady.p99)}${count(x.steady, steadySamples)}`))
      row("pair p50 / p99 ms", cell((x) => `${ms(x.pairs.p50)} / ${ms(x.pairs.p99)}${count(x.pairs, pairSamples)}`))
      row("TTFB p50 steady / pair ms", cell((x) => `${ms(x.steady.ttfbP50)} / ${ms(x.pairs.ttfbP50)}`))
      row("bytes", cell((x) => `${thousands(x.bytes)} ${x.encoding === "identity" ? "" : `${x.encoding} `}/ ${thousands(x.identityBytes)}`))
      if (byScale.get(names[0]!)!.items !== undefined) row("items (Link next)", cell((x) => `${thousands(x.items!)} (${x.nextLink === true ? "yes" : "no"})`))
    }
    if (alternated.size > 0) {
      log("")
      log(`reads of one thing at ${smallest.scale.name} and ${biggest.scale.name}, alternated read by read (what their growth goals read), p50 / p99 ms`)
      row("", ["steady", "pair"].flatMap((kind) => [`${kind} ${smallest.scale.name}`, `${kind} ${biggest.scale.name}`]))
      for (const [key, { pairs, steady }] of alternated) {
        row(Endpoints.find((e) => e.key === key)!.title, [...steady, ...pairs].map((t) => `${ms(t.p50)} / ${ms(t.p99)}`))
      }
    }
    log("")
    log("admin PUT of one application (referential admin API)")
    row("", names)
    row("p50 / p99 ms", names.map((n) => `${ms(puts.get(n)!.p50)} / ${ms(puts.get(n)!.p99)}`))
    log("")
    if (bigLog === undefined) {
      log(`change log of ${thousands(bigLogEntries)} entries: not measured (${quick ? "--quick" : "--only"})`)
    } else {
      log(`change log of ${thousands(bigLogEntries)} entries (one application of ${largest.name}; inserted, vacuumed, analysed and checkpointed in ${seconds(bigLog.insertMs)}), ${bigLogSamples} reads`)
      row("first page p50 / p99 ms", [`${ms(bigLog.first.p50)} / ${ms(bigLog.first.p99)}`])
      row(`page ${bigLog.depth + 1} p50 / p99 ms`, [`${ms(bigLog.deep.p50)} / ${ms(bigLog.deep.p99)}`])
      row("its SQL alone, pg p50 / p99", [`${ms(bigLog.floor.p50)} / ${ms(bigLog.floor.p99)}`])
    }
    log("")
    log("resident memory, MB: before the reads of a tenant / peak while reading it / after")
    for (const n of names) {
      const m = memory.get(n)!
      log(`  ${n.padEnd(5)}${Object.keys(m.before).map((s) => `${s} ${mb(m.before[s]!)} / ${mb(m.peak[s]!)} / ${mb(m.after[s]!)}`).join(", ")}`)
    }
    /** What the referential's read cache held more after the reads of scale `n` than before them, MB. */
    const kept = (n: string) => {
      const { before, after } = cacheHeld.get(n)!
      return after.answers + after.fragments - before.answers - before.fragments
    }
    /** What `service` gained while scale `n` was read, MB: the referential's beyond what its read cache kept. */
    const grewBeyondCache = (service: string, n: string) =>
      memory.get(n)!.peak[service]! - memory.get(n)!.before[service]! - (service === "referential" ? kept(n) : 0)
    for (const service of ["referential", "gateway"]) {
      log(`the ${service}'s peak while each endpoint was read, in the order read, MB`)
      for (const n of names) log(`  ${n.padEnd(5)}${endpointPeaks.get(n)!.map(([key, peak]) => `${key} ${mb(peak[service]!)}`).join(", ")}`)
    }
    log("the referential's read cache (its metrics), MB: answers + fragments before the reads of a tenant / after; the referential's growth beyond what it kept")
    for (const n of names) {
      const { before, after } = cacheHeld.get(n)!
      log(`  ${n.padEnd(5)}${before.answers.toFixed(1)} + ${before.fragments.toFixed(1)} / ${after.answers.toFixed(1)} + ${after.fragments.toFixed(1)}; +${grewBeyondCache("referential", n).toFixed(1)}`)
    }
    if (many === undefined) {
      log(`${manyTenants} demo-size tenants: not measured (--only)`)
    } else {
      log(`${manyTenants} demo-size tenants beside the others (seeded in ${seconds(many.seedMs)}, read in ${seconds(many.readMs)}), MB`)
      log(`  before reading: ${rssLine(many.before)}`)
      log(`  peak reading:   ${rssLine(many.peak)}`)
      log(`  after ${idleMs / 1000} s idle: ${rssLine(many.idle)}`)
    }

    // -- Goals
    const at = (key: string, scale: string) => figures.get(key)!.get(scale)!
    const big = largest.name
    const first = names[0]!
    /** `pass` undefined: not measured in this run. */
    type Goal = { readonly name: string; readonly measured: string; readonly bound: string; readonly pass: boolean | undefined }
    const goals: Array<Goal> = []
    const under = (name: string, value: number, bound: number, unit = "ms") =>
      goals.push({ name, measured: `${unit === "MB" ? value.toFixed(1) : ms(value)} ${unit}`, bound: `< ${bound} ${unit}`, pass: value < bound })
    for (const e of Endpoints) under(`${e.title} at ${big}: pair p99`, at(e.key, big).pairs.p99, Bound.pairP99Ms)
    for (const key of singleThings) {
      const e = Endpoints.find((x) => x.key === key)!
      for (const kind of ["steady", "pairs"] as const) {
        const [small, large] = alternated.get(key)![kind]
        const ratio = large.p50 / small.p50
        goals.push({
          name: `${e.title}: ${kind === "steady" ? "steady" : "pair"} p50 at ${big} / at ${first}`,
          measured: `${ratio.toFixed(2)} x (${ms(large.p50)} / ${ms(small.p50)} ms, alternated)`,
          bound: `<= ${Bound.singleGrowth} x`,
          pass: ratio <= Bound.singleGrowth
        })
      }
    }
    for (const key of ["search", "searchPage"].filter((key) => measures(key))) {
      under(`${Endpoints.find((x) => x.key === key)!.title} at ${big}: steady p50`, at(key, big).steady.p50, Bound.searchP50Ms)
      under(`${Endpoints.find((x) => x.key === key)!.title} at ${big}: pair p50`, at(key, big).pairs.p50, Bound.searchP50Ms)
    }
    const searched = measures("search", "searchPage") ? at("search", big) : undefined
    const paged = measures("search", "searchPage") ? at("searchPage", big) : undefined
    if (searched !== undefined && paged !== undefined) goals.push({
      name: `search at ${big}: paginated like the other lists`,
      measured: `${thousands(searched.items!)} matches; limit=100 answers ${thousands(paged.items!)}, Link next ${paged.nextLink === true ? "present" : "absent"}`,
      bound: "<= 100 items and a next link when more match",
      pass: paged.items! <= 100 && (searched.items! <= 100 || paged.nextLink === true)
    })
    if (measures("stats")) {
      under(`statistics at ${big}: steady p50`, at("stats", big).steady.p50, Bound.statsP50Ms)
      under(`statistics at ${big}: pair p50`, at("stats", big).pairs.p50, Bound.statsP50Ms)
    }
    const large = Endpoints.filter((e) => e.large)
    for (const e of large) {
      under(`${e.title} at ${big}: TTFB p50, steady`, at(e.key, big).steady.ttfbP50, Bound.ttfbMs)
      under(`${e.title} at ${big}: TTFB p50, pair`, at(e.key, big).pairs.ttfbP50, Bound.ttfbMs)
    }
    // "Does not grow with the answer's size": what a service gained while the largest tenant's
    // answers went through it, against the largest identity answer. Holding an answer whole
    // (its JSON text, or its encoded bytes) costs at least its size. The referential's read cache
    // keeps pieces and compressed forms of answers on purpose, as the issue's "per-application
    // pieces of the encoded answers" would, within a budget of bytes (REFERENTIAL_READ_CACHE_MB,
    // the goal of 250 more tenants): what it holds more after the reads (its metrics) is told
    // apart, and the goal is what the process gained beyond it, which at 1x, with answers fifty
    // times smaller, is printed beside it.
    const largestAnswer = Math.max(...large.map((e) => at(e.key, big).identityBytes)) / (1024 * 1024)
    // Without a large answer read (--only), there is nothing to grow with.
    for (const service of large.length === 0 ? [] : ["referential", "gateway"]) {
      const { before, peak } = memory.get(big)!
      const grew = peak[service]! - before[service]!
      const beyond = grewBeyondCache(service, big)
      const atSmallest = grewBeyondCache(service, names[0]!)
      goals.push({
        name: `${service}: resident growth while reading ${big}${service === "referential" ? ", beyond what its read cache keeps" : ""} (${mb(before[service]!)} -> peak ${mb(peak[service]!)} MB)`,
        measured: service === "referential"
          ? `+${beyond.toFixed(1)} MB (+${grew.toFixed(1)} in all, the read cache keeping +${kept(big).toFixed(1)}; at ${names[0]} +${atSmallest.toFixed(1)} beyond it)`
          : `+${grew.toFixed(1)} MB (at ${names[0]} +${atSmallest.toFixed(1)})`,
        bound: `< the largest answer, ${largestAnswer.toFixed(1)} MB identity`,
        pass: beyond < largestAnswer
      })
    }
    under(`admin PUT of one application at ${big}: p99`, puts.get(big)!.p99, Bound.putP99Ms)
    if (bigLog === undefined) {
      goals.push({ name: `changes over ${thousands(bigLogEntries)} entries: p99`, measured: `not measured (${quick ? "--quick" : "--only"})`, bound: `< ${Bound.bigLogP99Ms} ms`, pass: undefined })
    } else {
      under(`changes over ${thousands(bigLogEntries)} entries, first page: p99`, bigLog.first.p99, Bound.bigLogP99Ms)
      under(`changes over ${thousands(bigLogEntries)} entries, page ${bigLog.depth + 1}: p99`, bigLog.deep.p99, Bound.bigLogP99Ms)
    }
    for (const [service, value] of Object.entries(many?.peak ?? {})) under(`${service} with ${manyTenants} more tenants read: peak resident`, value, Bound.peakMb, "MB")
    for (const [service, value] of Object.entries(many?.idle ?? {})) under(`${service} after ${idleMs / 1000} s idle: resident`, value, Bound.idleMb, "MB")

    log("")
    log(`goals${quick ? ` (--quick: the goals set at 50x are checked at ${big})` : ""}`)
    for (const goal of goals) log(`${goal.pass === undefined ? "SKIP" : goal.pass ? "PASS" : "FAIL"}  ${goal.name}: ${goal.measured} (bound ${goal.bound})`)
    log("")
    log(`${goals.filter((g) => g.pass === true).length} of ${goals.filter((g) => g.pass !== undefined).length} goals met`)
    log(`durations: ${phases.map(([name, d]) => `${name} ${seconds(d)}`).join(", ")}; total ${seconds(performance.now() - benchStart)}`)
  } finally {
    clearTimeout(watchdog)
    readAgent.destroy()
    adminAgent.destroy()
    await cleanup()
    process.off("SIGINT", interrupted)
    process.off("SIGTERM", interrupted)
  }
}

try {
  await main()
} catch (error) {
  log(`bench:scale broke: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  process.exitCode = 1
}
