import { connect } from "@nats-io/transport-node"
import { jetstreamManager } from "@nats-io/jetstream"
import type { ClusterServer } from "@portfolio/platform/testing/LocalNats"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { WebhookReceiver } from "../support/webhookReceiver.js"
import { AllEvents, checkEvents, checkRollbacks, checkWrites, probeRateLimit, type RateLimitProbe, type RollbacksCheck, timeToRecovery, UpdatesOnly } from "./checks.js"
import { PreviousVersion, preparePreviousVersion } from "./previousVersion.js"
import { type Replica, repoRoot, type RunningCluster, startCluster } from "./topology.js"
import { adminOk, type Answers, type Fixture, installRollbackTrigger, prepareFixture, startTraffic, type Traffic } from "./traffic.js"

/**
 * `npm run drills`: the cluster's bad day (docs/architecture.md, "Replicas and faults"). The
 * cluster starts on the previous version and is upgraded first; then, under a steady mixed load,
 * each fault in turn, in three rounds (`--short`: one), each on a cluster of its own, and after
 * each the invariants, printed as a table; the last line says how many drills passed. Bounded:
 * past 15 minutes, the drills left are reported as not run, and failed.
 */
const short = process.argv.includes("--short")
/** `DRILLS_ONLY=<part of a name>`: the upgrade, then only the drills named so (to work on one). */
const only = process.env["DRILLS_ONLY"] || undefined
const rounds = short ? 1 : 3
const budgetMs = 15 * 60_000
const startedAt = Date.now()
const PartnerLimit = 60
const Replicas = 2

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const randomBetween = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))
const say = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

interface Context {
  readonly cluster: RunningCluster
  readonly fixture: Fixture
}

interface Drill {
  readonly name: string
  /** A NATS fault: the rate limit's bound is probed while it lasts. */
  readonly nats?: boolean
  /** Injects the fault and repairs it; resolves once repaired. */
  readonly run: (context: Context) => Promise<void>
}

/** The server leading `stream` now, asked of the cluster. */
const leaderOf = async (cluster: RunningCluster, stream: string): Promise<ClusterServer> => {
  const nc = await connect({ servers: cluster.nats.urls.split(","), timeout: 5_000 })
  try {
    for (let attempt = 0; ; attempt++) {
      const info = await (await jetstreamManager(nc)).streams.info(stream).catch(() => undefined)
      const leader = cluster.nats.servers.find((server) => server.name === info?.cluster?.leader)
      if (leader !== undefined) return leader
      if (attempt > 50) throw new Error(`${stream} has no leader`)
      await pause(200)
    }
  } finally {
    await nc.close()
  }
}

const killReplica = (service: Replica["service"]): Drill => ({
  name: `kill -9 a ${service} replica`,
  run: async ({ cluster }) => {
    const replicas = cluster.replicasOf(service)
    const victim = replicas[Math.floor(Math.random() * replicas.length)]!
    // A random moment under the load: a relay mid-publish, a dispatcher mid-POST (the receiver
    // answers after 100 ms), a gateway with requests in flight.
    await pause(randomBetween(500, 2_500))
    await victim.kill()
    await pause(3_000)
    await victim.start()
  }
})

const killLeader = (what: string, stream: string): Drill => ({
  name: `kill -9 the NATS server leading ${what}`,
  nats: true,
  run: async ({ cluster }) => {
    const leader = await leaderOf(cluster, stream)
    await leader.kill()
    await pause(8_000)
    await leader.start()
  }
})

/**
 * Every Deployment's rollout at once, as `kubectl rollout restart` of them all makes it: each
 * service's replicas one at a time (stopped with SIGTERM, started from `root`, the next once it is
 * ready), the services side by side, so that every service always has a replica serving.
 */
const rollTo = async (cluster: RunningCluster, root: string) => {
  for (const index of [...new Set(cluster.replicas.map((replica) => replica.index))].sort((a, b) => a - b)) {
    await Promise.all(cluster.replicas.filter((replica) => replica.index === index).map(async (replica) => {
      await replica.stop()
      await replica.start(root)
    }))
  }
}

/**
 * What the upgrade notes ask of an operator whose streams an earlier version made: that version
 * created them at one copy, and a version that finds a stream uses it as it is.
 */
const raiseReplicas = async (cluster: RunningCluster) => {
  const nc = await connect({ servers: cluster.nats.urls.split(","), timeout: 5_000 })
  try {
    const jsm = await jetstreamManager(nc)
    for (const stream of ["EVENTS", "WEBHOOK_WAKEUPS", "KV_gateway_rate_limits"]) {
      const { config } = await jsm.streams.info(stream)
      if (config.num_replicas < 3) await jsm.streams.update(stream, { ...config, num_replicas: 3 })
    }
  } finally {
    await nc.close()
  }
}

const upgrade: Drill = {
  name: `rolling upgrade from ${PreviousVersion}, its migrations first`,
  run: async ({ cluster }) => {
    // The chart's pre-upgrade Job: the new schema while every replica of the previous version serves.
    await cluster.migrate(repoRoot)
    await rollTo(cluster, repoRoot)
    await raiseReplicas(cluster)
  }
}

const rollback = (previous: string): Drill => ({
  name: `rolling rollback to ${PreviousVersion} on the migrated schema, then forward again`,
  run: async ({ cluster }) => {
    await rollTo(cluster, previous)
    // The previous version alone on the new schema, under the load, for a while.
    await pause(10_000)
    await rollTo(cluster, repoRoot)
  }
})

const drills: ReadonlyArray<Drill> = [
  ...(["referential", "provisioning", "webhook-dispatcher", "gateway", "console"] as const).map(killReplica),
  killLeader("the events stream", "EVENTS"),
  killLeader("the rate-limit bucket", "KV_gateway_rate_limits"),
  {
    name: "a NATS server frozen 30 s (SIGSTOP), then resumed",
    nats: true,
    run: async ({ cluster }) => {
      const frozen = await leaderOf(cluster, "EVENTS")
      frozen.freeze()
      await pause(30_000)
      frozen.resume()
    }
  },
  {
    name: "PostgreSQL restarted",
    run: async ({ cluster }) => {
      await pause(randomBetween(500, 2_000))
      await cluster.postgres.restart(1_000)
    }
  },
  {
    name: "rolling restart of every service",
    run: async ({ cluster }) => rollTo(cluster, repoRoot)
  }
]

interface Row {
  readonly drill: string
  readonly answers: Answers
  readonly writes: { readonly acknowledged: number; readonly lost: ReadonlyArray<string> }
  readonly events: { readonly committed: number; readonly missing: number; readonly duplicates: number; readonly unknown: number }
  readonly rollbacks: RollbacksCheck
  readonly rateLimit: RateLimitProbe | undefined
  readonly recoveryMs: number | string
  readonly failures: ReadonlyArray<string>
}

/** Each recovery writes an application of its own (codes are at most 64 characters: not a drill's name). */
let canaries = 0

const runDrill = async (context: Context, traffic: Traffic, receiver: WebhookReceiver, drill: Drill, round: number, lastDuplicates: number): Promise<Row> => {
  const failures: Array<string> = []
  traffic.takeAnswers()
  const probe = drill.nats === true ? await probeRateLimit(context.cluster, context.fixture, PartnerLimit, Replicas) : undefined
  // The probe asks from the fault's start until the cluster has recovered.
  const recovery = drill.run(context).then(() => timeToRecovery(context.cluster, context.fixture, receiver, `CANARY-${++canaries}`))
  const probing = probe?.run(recovery)
  const recoveryMs = await recovery
  const rateLimit = await probing
  const answers = traffic.takeAnswers()
  const writes = await checkWrites(context.cluster, context.fixture, traffic)
  const events = await checkEvents(context.cluster, receiver, 90_000)
  const rollbacks = await checkRollbacks(context.cluster, context.fixture, receiver, traffic)
  if (answers.other.length > 0) failures.push(`${answers.other.length} public answers neither 2xx nor 503 with Retry-After: ${answers.other.slice(0, 3).join("; ")}`)
  if (writes.lost.length > 0) failures.push(`acknowledged writes not readable: ${writes.lost.slice(0, 3).join("; ")}`)
  if (events.missing > 0) failures.push(`${events.missing} committed events not delivered`)
  if (events.unknown > 0) failures.push(`${events.unknown} events delivered that no committed transaction wrote`)
  if (rollbacks.rolledBack === 0) failures.push("no write rolled back at its commit yet: the rollback lane is not running")
  if (rollbacks.seen.length > 0) failures.push(`a rolled-back transaction seen: ${rollbacks.seen.slice(0, 3).join("; ")}`)
  if (rateLimit !== undefined && rateLimit.admitted > rateLimit.bound) failures.push(`the rate limit admitted ${rateLimit.admitted}, above its bound of ${rateLimit.bound}`)
  if (rateLimit !== undefined && rateLimit.other.length > 0) failures.push(`rate-limit probe: ${rateLimit.other.length} answers neither 200, 429 nor 503: ${rateLimit.other.slice(0, 3).join("; ")}`)
  if (typeof recoveryMs === "string") failures.push(`not recovered within 120 s: ${recoveryMs}`)
  return { drill: `${drill.name}${rounds > 1 ? ` (#${round})` : ""}`, answers, writes, events: { ...events, duplicates: events.duplicates - lastDuplicates }, rollbacks, rateLimit, recoveryMs, failures }
}

const table = (rows: ReadonlyArray<Row>) => {
  const header = ["drill", "2xx", "503+RA", "other", "writes ok/acked", "events committed", "missing", "dups", "unknown", "rolled back (seen)", "rate limit (bound)", "recovery s", "result"]
  const lines = rows.map((row) => [
    row.drill,
    String(row.answers.ok),
    String(row.answers.unavailable),
    String(row.answers.other.length),
    `${row.writes.acknowledged - row.writes.lost.length}/${row.writes.acknowledged}`,
    String(row.events.committed),
    String(row.events.missing),
    String(row.events.duplicates),
    String(row.events.unknown),
    `${row.rollbacks.rolledBack} (${row.rollbacks.seen.length})`,
    row.rateLimit === undefined ? "-" : `${row.rateLimit.admitted} (${row.rateLimit.bound})`,
    typeof row.recoveryMs === "string" ? "-" : (row.recoveryMs / 1000).toFixed(1),
    row.failures.length === 0 ? "passed" : "FAILED"
  ])
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)))
  const format = (cells: ReadonlyArray<string>) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`
  return [format(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...lines.map(format)].join("\n")
}

/**
 * One round: a cluster started on the previous version (a fresh database and fresh NATS servers,
 * so that every round upgrades a schema of that version, its migrations included), the upgrade,
 * each fault in turn, the rollback and the way forward again.
 */
const runRound = async (round: number, previous: string, receiver: WebhookReceiver, rows: Array<Row>): Promise<{ readonly notRun: number; readonly failedLogs: ReadonlyArray<string> }> => {
  say(`round ${round} of ${rounds}: starting the cluster on the previous version (${PreviousVersion}): 3 NATS servers, PostgreSQL, ${Replicas} replicas of each service, nginx`)
  const roundStartedAt = Date.now()
  const workDir = mkdtempSync(`${tmpdir()}/portfolio-drills-`)
  const cluster = await startCluster({
    workDir,
    replicas: Replicas,
    root: previous,
    // That version reads one NATS server from NATS_URL.
    envOf: (_root, nats) => ({ NATS_URL: nats.urls.split(",")[0]! }),
    env: {
      LOG_LEVEL: "Warn",
      PARTNER_RATE_LIMIT_PER_MINUTE: String(PartnerLimit),
      RATE_LIMIT_PER_MINUTE: "100000",
      WEBHOOK_TIMEOUT: "5s",
      WEBHOOK_SWEEP_INTERVAL: "2s",
      WEBHOOK_RETRY_SCHEDULE: "1s,2s,4s,8s,16s,32s"
    }
  })
  let notRun = 0
  let failed = 0
  let traffic: Traffic | undefined
  try {
    say(`cluster ready in ${((Date.now() - roundStartedAt) / 1000).toFixed(1)} s (logs: ${cluster.workDir}/logs)`)
    await installRollbackTrigger(cluster.postgres.url)
    const fixture = await prepareFixture(cluster, "drills")
    for (const path of [AllEvents, UpdatesOnly]) {
      await adminOk(cluster, "webhook-dispatcher", "POST", `/admin/tenants/${fixture.tenantId}/webhooks`, {
        url: receiver.url(path),
        ...(path === UpdatesOnly ? { events: ["application.updated"] } : {})
      })
    }
    traffic = startTraffic(cluster, fixture)
    await pause(5_000)
    let duplicates = 0
    for (const drill of [upgrade, ...drills, rollback(previous)]) {
      if (only !== undefined && drill !== upgrade && !drill.name.includes(only)) continue
      if (Date.now() - startedAt > budgetMs) {
        notRun++
        continue
      }
      say(`${drill.name}${rounds > 1 ? ` (#${round})` : ""}...`)
      const row = await runDrill({ cluster, fixture }, traffic, receiver, drill, round, duplicates)
      duplicates += row.events.duplicates
      rows.push(row)
      if (row.failures.length > 0) failed++
      say(`  ${row.failures.length === 0 ? "passed" : `FAILED: ${row.failures.join(" | ")}`}`)
    }
  } finally {
    await traffic?.stop()
    await cluster.stop()
  }
  // The processes' logs stay for a failure's post-mortem.
  if (failed === 0 && notRun === 0) rmSync(workDir, { recursive: true, force: true })
  return { notRun, failedLogs: failed === 0 && notRun === 0 ? [] : [`${workDir}/logs`] }
}

const main = async () => {
  const receiver = await new WebhookReceiver().start()
  receiver.delayMs = 100
  const previous = preparePreviousVersion(say)
  const rows: Array<Row> = []
  let notRun = 0
  const logs: Array<string> = []
  try {
    for (let round = 1; round <= rounds; round++) {
      // Each round's events are its own: the receiver starts empty.
      receiver.received.length = 0
      const outcome = await runRound(round, previous, receiver, rows)
      notRun += outcome.notRun
      logs.push(...outcome.failedLogs)
    }
  } finally {
    await receiver.stop()
  }
  const failed = rows.filter((row) => row.failures.length > 0).length + notRun
  for (const folder of logs) console.log(`logs of every process: ${folder}`)
  console.log(`\n${table(rows)}\n`)
  if (notRun > 0) console.log(`${notRun} drills not run: past the ${budgetMs / 60_000} minutes budget.`)
  console.log(`${rows.length - failed + notRun} passed, ${failed} failed (${((Date.now() - startedAt) / 1000).toFixed(0)} s)`)
  process.exit(failed === 0 ? 0 : 1)
}

await main()
