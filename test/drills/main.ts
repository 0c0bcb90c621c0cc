import { connect } from "@nats-io/transport-node"
import { jetstreamManager } from "@nats-io/jetstream"
import type { ClusterServer } from "@portfolio/platform/testing"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { WebhookReceiver } from "../support/webhookReceiver.js"
import { AllEvents, checkEvents, checkRollbacks, checkWrites, probeRateLimit, type RateLimitProbe, type RollbacksCheck, timeToRecovery, UpdatesOnly } from "./checks.js"
import { dispatcherMidPost, gatewayWithRequestsInFlight, relayMidPublish } from "./moments.js"
import { PreviousVersion, preparePreviousVersion } from "./previousVersion.js"
import { killEverythingStarted, type Replica, repoRoot, type RunningCluster, startCluster } from "./topology.js"
import { adminOk, type Answers, type Fixture, installRollbackTrigger, prepareFixture, startTraffic, type Traffic } from "./traffic.js"
import { bounded, Budget, interruptible, pause, reasonOf } from "./watchdog.js"

/**
 * `npm run drills`: the cluster's bad day (docs/architecture.md, "Replicas and faults"). The
 * cluster starts on the previous version and is upgraded first; then, under a steady mixed load,
 * each fault in turn, in three rounds (`--short`: one), each on a cluster of its own, and after
 * each the invariants, printed as a table; the last line says how many drills passed.
 *
 * Bounded: a watchdog aborts whatever runs when the budget's last minute begins (the drill then
 * running is cut off, every drill not run yet is reported so, both failed), everything started is
 * stopped and the table printed; no round and no drill starts that is not expected to end in time.
 * SIGINT and SIGTERM do the same at once (a second one: everything killed, the table printed, now).
 */
const short = process.argv.includes("--short")
/** `DRILLS_ONLY=<part of a name>`: the upgrade, then only the drills named so (to work on one). */
const only = process.env["DRILLS_ONLY"] || undefined
const rounds = short ? 1 : 3
const budgetMs = 15 * 60_000
const startedAt = Date.now()
/**
 * The end of the budget kept for stopping everything and printing: the load (waited for 8 s at
 * most), the cluster (35 s, its replicas' SIGTERM grace and more, then killed) or a start cut
 * short (10 s), the receiver (2 s).
 */
const TeardownReserveMs = 60_000
const budget = new Budget(startedAt, budgetMs, TeardownReserveMs)
const PartnerLimit = 60
const Replicas = 2

const randomBetween = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))
const say = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 300)

/** What ends the drills early: the watchdog, a signal, an uncaught error. */
const stopping = budget.signal
const stopDrills = (reason: string) => {
  if (budget.stop(reason)) say(`stopping the drills: ${reason}`)
}

interface Context {
  readonly cluster: RunningCluster
  readonly fixture: Fixture
  readonly traffic: Traffic
  readonly receiver: WebhookReceiver
  readonly signal: AbortSignal
}

/**
 * What the steps the drills wait on are allowed, for the budget's estimates until a drill has run
 * once: a process (re)started until ready, or one step of a rolling restart (one replica of each
 * service replaced); the checks after a fault (recovery, every event delivered, the writes read
 * back). Generous: with them the first round is expected to take 9 minutes, and took 3.4 here
 * (a replica's kill 35 s expected, 6 to 9 s taken); the next rounds are expected from what it took.
 */
const StartMs = 10_000
const ChecksMs = 15_000

interface Drill {
  readonly name: string
  /** A NATS fault: the rate limit's bound is probed while it lasts. */
  readonly nats?: boolean
  /** What it waits for by design, and an allowance for what it waits on (StartMs, ChecksMs): its estimate until measured. */
  readonly expectedMs: number
  /** Injects the fault and repairs it; resolves once repaired, with the victim's state at the fault when it has one to tell. */
  readonly run: (context: Context) => Promise<string | undefined>
}

/** The server leading `stream` now, asked of the cluster. */
const leaderOf = async (cluster: RunningCluster, stream: string, signal: AbortSignal): Promise<ClusterServer> => {
  const nc = await connect({ servers: cluster.nats.urls.split(","), timeout: 5_000 })
  try {
    for (let attempt = 0; ; attempt++) {
      // The manager's own check of the JetStream API fails too while the cluster elects its meta
      // leader after a server came back ("JetStream system temporarily unavailable"): asked again.
      const info = await jetstreamManager(nc).then((jsm) => jsm.streams.info(stream)).catch(() => undefined)
      const leader = cluster.nats.servers.find((server) => server.name === info?.cluster?.leader)
      if (leader !== undefined) return leader
      if (attempt > 50) throw new Error(`${stream} has no leader`)
      await pause(200, signal)
    }
  } finally {
    await nc.close()
  }
}

/**
 * kill -9 of one replica, at a random moment under the load; for three services, in the moment
 * the issue names (moments.ts): the referential's relay mid-publish, a dispatcher mid-POST (the
 * receiver answers after 100 ms), a gateway with requests in flight.
 */
const killReplica = (service: Replica["service"]): Drill => ({
  name: `kill -9 a ${service} replica`,
  expectedMs: 2_500 + 5_000 + 3_000 + StartMs + ChecksMs,
  run: async ({ cluster, receiver, signal, traffic }) => {
    const replicas = cluster.replicasOf(service)
    const victim = replicas[Math.floor(Math.random() * replicas.length)]!
    await pause(randomBetween(500, 2_500), signal)
    let state: string
    if (service === "referential") state = (await relayMidPublish(cluster, victim, signal)).state
    else if (service === "webhook-dispatcher") state = (await dispatcherMidPost(receiver, victim, signal)).state
    else if (service === "gateway") {
      const killed = await gatewayWithRequestsInFlight(cluster, traffic, victim, signal)
      await pause(3_000, signal)
      // The requests it held are answered by now (the ingress retried them, or answered 503).
      state = killed.inFlightAt().state
    } else {
      await victim.kill()
      state = "random moment"
    }
    if (service !== "gateway") await pause(3_000, signal)
    await victim.start()
    return `${victim.name} ${state}`
  }
})

const killLeader = (what: string, stream: string): Drill => ({
  name: `kill -9 the NATS server leading ${what}`,
  nats: true,
  expectedMs: 8_000 + StartMs + ChecksMs,
  run: async ({ cluster, signal }) => {
    const leader = await leaderOf(cluster, stream, signal)
    await leader.kill()
    await pause(8_000, signal)
    await leader.start()
    return `${leader.name} (${stream} leader)`
  }
})

/**
 * Every Deployment's rollout at once, as `kubectl rollout restart` of them all makes it: each
 * service's replicas one at a time (stopped with SIGTERM, started from `root`, the next once it is
 * ready), the services side by side, so that every service always has a replica serving.
 */
const rollTo = async (cluster: RunningCluster, root: string, signal: AbortSignal) => {
  for (const index of [...new Set(cluster.replicas.map((replica) => replica.index))].sort((a, b) => a - b)) {
    signal.throwIfAborted()
    await Promise.all(cluster.replicas.filter((replica) => replica.index === index).map(async (replica) => {
      await replica.stop()
      signal.throwIfAborted()
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
  // Five migration Jobs, two rollout steps, the streams raised.
  expectedMs: 5 * 5_000 + Replicas * StartMs + 2_000 + ChecksMs,
  run: async ({ cluster, signal }) => {
    // The chart's pre-upgrade Job: the new schema while every replica of the previous version serves.
    await cluster.migrate(repoRoot)
    await rollTo(cluster, repoRoot, signal)
    await raiseReplicas(cluster)
    return undefined
  }
}

const rollback = (previous: string): Drill => ({
  name: `rolling rollback to ${PreviousVersion} on the migrated schema, then forward again`,
  expectedMs: 2 * Replicas * StartMs + 10_000 + ChecksMs,
  run: async ({ cluster, signal }) => {
    await rollTo(cluster, previous, signal)
    // The previous version alone on the new schema, under the load, for a while.
    await pause(10_000, signal)
    await rollTo(cluster, repoRoot, signal)
    return undefined
  }
})

const drills: ReadonlyArray<Drill> = [
  ...(["referential", "provisioning", "webhook-dispatcher", "gateway", "console"] as const).map(killReplica),
  killLeader("the events stream", "EVENTS"),
  killLeader("the rate-limit bucket", "KV_gateway_rate_limits"),
  {
    name: "a NATS server frozen 30 s (SIGSTOP), then resumed",
    nats: true,
    expectedMs: 30_000 + ChecksMs,
    run: async ({ cluster, signal }) => {
      const frozen = await leaderOf(cluster, "EVENTS", signal)
      frozen.freeze()
      try {
        await pause(30_000, signal)
      } finally {
        frozen.resume()
      }
      return `${frozen.name} (EVENTS leader)`
    }
  },
  {
    name: "PostgreSQL restarted",
    expectedMs: 2_000 + 1_000 + StartMs + ChecksMs,
    run: async ({ cluster, signal }) => {
      await pause(randomBetween(500, 2_000), signal)
      await cluster.postgres.restart(1_000)
      return undefined
    }
  },
  {
    name: "rolling restart of every service",
    expectedMs: Replicas * StartMs + ChecksMs,
    run: async ({ cluster, signal }) => {
      await rollTo(cluster, repoRoot, signal)
      return undefined
    }
  }
]

/** Each round's drills, in order: the upgrade, the faults, the rollback. */
const planOf = (previous: string): ReadonlyArray<Drill> =>
  [upgrade, ...drills, rollback(previous)].filter((drill) => only === undefined || drill === upgrade || drill.name.includes(only))

const labelOf = (drill: Drill, round: number) => `${drill.name}${rounds > 1 ? ` (#${round})` : ""}`

interface Measures {
  readonly answers: Answers
  readonly writes: { readonly acknowledged: number; readonly lost: ReadonlyArray<string> }
  readonly events: { readonly committed: number; readonly missing: number; readonly duplicates: number; readonly unknown: number }
  readonly rollbacks: RollbacksCheck
  readonly rateLimit: RateLimitProbe | undefined
  readonly recoveryMs: number | string
}

interface Row {
  readonly drill: string
  readonly tookMs?: number
  /** The victim's state at the fault (moments.ts), when the drill has one. */
  readonly victim?: string
  readonly measures?: Measures
  readonly failures: ReadonlyArray<string>
  /** Cut off or not run: why (a failure all the same). */
  readonly unfinished?: string
}

/** Every drill planned, by label, in order; those without a row at the end were not run. */
const planned: Array<string> = []
const rows: Array<Row> = []
/** Failures that are no drill's: an uncaught error, a round's setup. */
const errors: Array<string> = []
const logs: Array<string> = []

/** A round's cluster start, fixture, warm-up and stop, until measured (the budget's "round" entry). */
const RoundOverheadMs = 60_000
const estimateOf = (drill: Drill) => budget.estimate(drill.name, drill.expectedMs)
const fits = (ms: number) => budget.fits(ms)
const leftS = () => ((budget.deadline - Date.now()) / 1000).toFixed(0)

/** Each recovery writes an application of its own (codes are at most 64 characters: not a drill's name). */
let canaries = 0

/**
 * One drill, then its checks; cut off (a row that says so) when the drills are stopped meanwhile.
 * A drill that throws (a replica that does not start again) throws: the round stops.
 */
const runDrill = async (context: Context, drill: Drill, label: string, lastDuplicates: number): Promise<Row> => {
  const began = Date.now()
  const { cluster, fixture, receiver, signal, traffic } = context
  const measure = async (): Promise<Row> => {
    const failures: Array<string> = []
    traffic.takeAnswers()
    const probe = drill.nats === true ? await probeRateLimit(cluster, fixture, PartnerLimit, Replicas) : undefined
    let victim: string | undefined
    // The probe asks from the fault's start until the cluster has recovered.
    const recovery = drill.run(context).then((state) => {
      victim = state
      return timeToRecovery(cluster, fixture, receiver, `CANARY-${++canaries}`, signal)
    })
    const probing = probe?.run(recovery)
    const recoveryMs = await recovery
    const rateLimit = await probing
    const answers = traffic.takeAnswers()
    const writes = await checkWrites(cluster, fixture, traffic)
    const events = await checkEvents(cluster, receiver, 90_000, signal)
    const rollbacks = await checkRollbacks(cluster, fixture, receiver, traffic)
    if (answers.other.length > 0) failures.push(`${answers.other.length} public answers neither 2xx nor 503 with Retry-After: ${answers.other.slice(0, 3).join("; ")}`)
    if (writes.lost.length > 0) failures.push(`acknowledged writes not readable: ${writes.lost.slice(0, 3).join("; ")}`)
    if (events.missing > 0) failures.push(`${events.missing} committed events not delivered`)
    if (events.unknown > 0) failures.push(`${events.unknown} events delivered that no committed transaction wrote`)
    if (rollbacks.rolledBack === 0) failures.push("no write rolled back at its commit yet: the rollback lane is not running")
    if (rollbacks.seen.length > 0) failures.push(`a rolled-back transaction seen: ${rollbacks.seen.slice(0, 3).join("; ")}`)
    if (rateLimit !== undefined && rateLimit.admitted > rateLimit.bound) failures.push(`the rate limit admitted ${rateLimit.admitted}, above its bound of ${rateLimit.bound}`)
    if (rateLimit !== undefined && rateLimit.other.length > 0) failures.push(`rate-limit probe: ${rateLimit.other.length} answers neither 200, 429 nor 503: ${rateLimit.other.slice(0, 3).join("; ")}`)
    if (typeof recoveryMs === "string") failures.push(`not recovered within 120 s: ${recoveryMs}`)
    return {
      drill: label,
      tookMs: Date.now() - began,
      ...(victim === undefined ? {} : { victim }),
      measures: { answers, writes, events: { ...events, duplicates: events.duplicates - lastDuplicates }, rollbacks, rateLimit, recoveryMs },
      failures
    }
  }
  try {
    return await interruptible(measure(), signal)
  } catch (error) {
    if (!signal.aborted) throw error
    const tookMs = Date.now() - began
    return { drill: label, tookMs, failures: [`cut off after ${(tookMs / 1000).toFixed(0)} s: ${reasonOf(signal)}`], unfinished: `cut off: ${reasonOf(signal)}` }
  }
}

const notRun = (label: string, why: string): Row => ({ drill: label, failures: [`not run: ${why}`], unfinished: `not run: ${why}` })

const table = (all: ReadonlyArray<Row>) => {
  const header = ["drill", "took s", "victim at the fault", "2xx", "503+RA", "other", "writes ok/acked", "events committed", "missing", "dups", "unknown", "rolled back (seen)", "rate limit (bound)", "recovery s", "result"]
  const lines = all.map((row) => {
    const m = row.measures
    const cells = m === undefined
      ? Array.from({ length: 11 }, () => "-")
      : [
        String(m.answers.ok),
        String(m.answers.unavailable),
        String(m.answers.other.length),
        `${m.writes.acknowledged - m.writes.lost.length}/${m.writes.acknowledged}`,
        String(m.events.committed),
        String(m.events.missing),
        String(m.events.duplicates),
        String(m.events.unknown),
        `${m.rollbacks.rolledBack} (${m.rollbacks.seen.length})`,
        m.rateLimit === undefined ? "-" : `${m.rateLimit.admitted} (${m.rateLimit.bound})`,
        typeof m.recoveryMs === "string" ? "-" : (m.recoveryMs / 1000).toFixed(1)
      ]
    return [
      row.drill,
      row.tookMs === undefined ? "-" : (row.tookMs / 1000).toFixed(0),
      row.victim ?? "-",
      ...cells,
      row.unfinished !== undefined ? `FAILED (${row.unfinished})` : row.failures.length === 0 ? "passed" : "FAILED"
    ]
  })
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)))
  const format = (cells: ReadonlyArray<string>) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`
  return [format(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...lines.map(format)].join("\n")
}

let finished = false
/**
 * The end, however it comes (the last drill, the watchdog, a signal, an error): every process
 * still running killed, the table printed with every planned drill (those without a row: not
 * run, failed), the last line, the exit code.
 */
const finish = (note?: string) => {
  if (finished) return
  finished = true
  killEverythingStarted()
  const why = stopping.aborted ? reasonOf(stopping) : "the drills stopped before it"
  const all = planned.map((label) => rows.find((row) => row.drill === label) ?? notRun(label, why))
  const failed = all.filter((row) => row.failures.length > 0)
  for (const folder of logs) console.log(`logs of every process: ${folder}`)
  console.log(`\n${table(all)}\n`)
  const notRunRows = failed.filter((row) => row.unfinished?.startsWith("not run") === true)
  for (const row of failed.filter((row) => !notRunRows.includes(row))) console.log(`FAILED ${row.drill}: ${row.failures.join(" | ")}`)
  for (const reason of new Set(notRunRows.map((row) => row.unfinished!))) {
    console.log(`${reason}: ${notRunRows.filter((row) => row.unfinished === reason).map((row) => row.drill).join("; ")}`)
  }
  for (const error of errors) console.log(`ERROR ${error}`)
  if (note !== undefined) console.log(note)
  console.log(`${all.length - failed.length} passed, ${failed.length} failed (${((Date.now() - startedAt) / 1000).toFixed(0)} s)`)
  process.exit(failed.length === 0 && errors.length === 0 ? 0 : 1)
}

/** What the round's load got, per client (three PATs, two partner clients, the member flow, the drills' bursts). */
const loadSummary = (traffic: Traffic) =>
  [...traffic.totals].sort(([a], [b]) => a.localeCompare(b)).map(([client, total]) =>
    `${client} ${total.ok} 2xx, ${total.unavailable} 503, ${total.other} other${client.startsWith("partner") ? `, ${total.tokens} tokens` : ""}`).join("; ")

/**
 * One round: a cluster started on the previous version (a fresh database and fresh NATS servers,
 * so that every round upgrades a schema of that version, its migrations included), the upgrade,
 * each fault in turn, the rollback and the way forward again. Started only when it is expected to
 * end inside the budget; so is each of its drills.
 */
const runRound = async (round: number, previous: string, receiver: WebhookReceiver) => {
  const plan = planOf(previous)
  const expected = budget.estimate("round", RoundOverheadMs) + plan.reduce((sum, drill) => sum + estimateOf(drill), 0)
  if (!fits(expected)) {
    say(`round ${round} of ${rounds} not started: expected to take ${(expected / 1000).toFixed(0)} s, ${leftS()} s left before the time budget's end`)
    for (const drill of plan) rows.push(notRun(labelOf(drill, round), "time budget"))
    return
  }
  say(`round ${round} of ${rounds}: starting the cluster on the previous version (${PreviousVersion}): 3 NATS servers, PostgreSQL, ${Replicas} replicas of each service, nginx`)
  const roundStartedAt = Date.now()
  const firstRow = rows.length
  const workDir = mkdtempSync(`${tmpdir()}/portfolio-drills-`)
  let starting: Promise<RunningCluster> | undefined
  let cluster: RunningCluster | undefined
  let traffic: Traffic | undefined
  let next = 0
  let running: { readonly label: string; readonly began: number } | undefined
  let stoppedBy: string | undefined
  let drillsMs = 0
  try {
    starting = startCluster({
      workDir,
      replicas: Replicas,
      root: previous,
      signal: stopping,
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
    cluster = await interruptible(starting, stopping)
    const started = cluster
    say(`cluster ready in ${((Date.now() - roundStartedAt) / 1000).toFixed(1)} s (logs: ${started.workDir}/logs)`)
    const fixture = await interruptible((async () => {
      await installRollbackTrigger(started.postgres.url)
      const prepared = await prepareFixture(started, "drills")
      for (const path of [AllEvents, UpdatesOnly]) {
        await adminOk(started, "webhook-dispatcher", "POST", `/admin/tenants/${prepared.tenantId}/webhooks`, {
          url: receiver.url(path),
          ...(path === UpdatesOnly ? { events: ["application.updated"] } : {})
        })
      }
      return prepared
    })(), stopping)
    traffic = startTraffic(started, fixture)
    await pause(5_000, stopping)
    const context: Context = { cluster: started, fixture, traffic, receiver, signal: stopping }
    let duplicates = 0
    for (; next < plan.length && !stopping.aborted; next++) {
      const drill = plan[next]!
      const label = labelOf(drill, round)
      if (!fits(estimateOf(drill))) {
        say(`${label}: not run, expected to take ${(estimateOf(drill) / 1000).toFixed(0)} s, ${leftS()} s left`)
        rows.push(notRun(label, "time budget"))
        continue
      }
      say(`${label}...`)
      running = { label, began: Date.now() }
      const row = await runDrill(context, drill, label, duplicates)
      running = undefined
      rows.push(row)
      drillsMs += row.tookMs ?? 0
      duplicates += row.measures?.events.duplicates ?? 0
      if (row.unfinished === undefined) budget.record(drill.name, row.tookMs ?? 0)
      say(`  ${row.failures.length === 0 ? "passed" : `FAILED: ${row.failures.join(" | ")}`}${row.victim === undefined ? "" : ` (victim: ${row.victim})`}`)
    }
  } catch (error) {
    if (!stopping.aborted) {
      stoppedBy = messageOf(error)
      if (running !== undefined) {
        rows.push({ drill: running.label, tookMs: Date.now() - running.began, failures: [`the drill failed: ${stoppedBy}`] })
        next++
      } else errors.push(`round ${round}: ${cluster === undefined ? "the cluster did not start" : "its setup failed"}: ${stoppedBy}`)
      say(`round ${round} stopped: ${stoppedBy}`)
    }
  } finally {
    const stopBegan = Date.now()
    if (!(await bounded(traffic?.stop(), 8_000))) say("the load did not stop within 8 s")
    if (!(await bounded(cluster?.stop(), 35_000))) say("the cluster did not stop within 35 s: killed")
    // Whatever did not stop in time, and what a start cut short had started: that start then
    // fails at its next step (the cluster refuses to start anything once killed) and stops.
    killEverythingStarted()
    if (cluster === undefined && !(await bounded(starting, 10_000))) say("the cluster's start did not end within 10 s of its kill")
    killEverythingStarted()
    say(`round ${round}: everything stopped in ${((Date.now() - stopBegan) / 1000).toFixed(1)} s`)
  }
  if (traffic !== undefined) say(`round ${round} load: ${loadSummary(traffic)}`)
  // Not run: the rest of a round that stopped (the drills' stop reports its own at the end).
  if (stoppedBy !== undefined) for (const drill of plan.slice(next)) rows.push(notRun(labelOf(drill, round), `the round stopped: ${stoppedBy}`))
  if (next >= plan.length && !stopping.aborted) budget.record("round", Date.now() - roundStartedAt - drillsMs)
  // The processes' logs stay for a failure's post-mortem.
  const clean = rows.slice(firstRow).every((row) => row.failures.length === 0)
  if (clean && stoppedBy === undefined && !stopping.aborted) rmSync(workDir, { recursive: true, force: true })
  else logs.push(`${workDir}/logs`)
}

const main = async () => {
  // The watchdog: at the deadline, the drill running is cut off and everything stopped; and,
  // should stopping hang, the table printed and everything killed before the budget's end (a
  // timer that also keeps this process alive until `finish`, whatever else hangs).
  budget.arm((reason) => say(`stopping the drills: ${reason}`))
  setTimeout(() => finish("the time budget ended before everything stopped: killed"), startedAt + budgetMs - 5_000 - Date.now())
  let signals = 0
  for (const name of ["SIGINT", "SIGTERM"] as const) {
    process.on(name, () => {
      signals++
      if (signals === 1) stopDrills(name)
      else finish(`${name} again: everything killed`)
    })
  }
  const unexpected = (error: unknown) => {
    // What a drill cut short still does may fail: nobody waits for it any more.
    if (stopping.aborted) return say(`after the stop: ${messageOf(error)}`)
    errors.push(`uncaught: ${messageOf(error)}`)
    stopDrills(`an uncaught error: ${messageOf(error)}`)
  }
  process.on("uncaughtException", unexpected)
  process.on("unhandledRejection", unexpected)

  // Every drill of every round, so that the table lists those never run, whatever stops the drills.
  for (let round = 1; round <= rounds; round++) planned.push(...planOf(repoRoot).map((drill) => labelOf(drill, round)))
  let receiver: WebhookReceiver | undefined
  try {
    receiver = await new WebhookReceiver().start()
    // A dispatcher is caught mid-POST (moments.ts) while the receiver holds its request.
    receiver.delayMs = 100
    const previous = await interruptible(preparePreviousVersion(say, stopping), stopping)
    for (let round = 1; round <= rounds && !stopping.aborted; round++) {
      // Each round's events are its own: the receiver starts empty.
      receiver.received.length = 0
      await runRound(round, previous, receiver)
    }
  } catch (error) {
    if (!stopping.aborted) errors.push(`the drills stopped: ${messageOf(error)}`)
  } finally {
    await bounded(receiver?.stop(), 2_000)
  }
  finish()
}

await main()
