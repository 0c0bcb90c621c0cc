/**
 * Part of `npm run bench`: the dispatcher's deliveries per second to a local receiver, side by side
 * with a bare undici POST loop at the same concurrency in the same run, and the time from a
 * change's commit to its first POST (p50, p99). Starts its own processes on a fresh database.
 */
import { createDatabase, freePort, restartableJetStream } from "@portfolio/platform/testing"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes, randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { connect } from "@nats-io/transport-node"
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { Pool } from "undici"
import { adminCall } from "../../../../test/support/adminCall.js"
import { repoRoot } from "../../../../test/support/cli.js"
import { cpuMeter, pidsNamed, residentMb } from "../../../../test/support/cpuTime.js"
import { ServiceSupervisor } from "../../../../test/support/serviceSupervisor.js"

const Subscriptions = 4
const PerSubscription = 8
const Concurrency = Subscriptions * PerSubscription
const Events = Number(process.env["BENCH_EVENTS"] ?? 2_000)
const LatencySamples = Number(process.env["BENCH_SAMPLES"] ?? 200)
const log = (line: string) => process.stdout.write(`${line}\n`)
const perDelivery = (spent: Record<string, number>, count: number) =>
  Object.entries(spent).map(([group, seconds]) => `${group} ${((seconds * 1e6) / count).toFixed(0)} us`).join(", ")
const percentile = (values: ReadonlyArray<number>, p: number) => [...values].sort((a, b) => a - b)[Math.ceil((p / 100) * values.length) - 1]!

const startReceiver = () =>
  new Promise<{ url: string; child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "services/webhook-dispatcher/test/bench/receiver.ts"], { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
    child.on("error", reject)
    createInterface({ input: child.stdout! }).once("line", (port) => resolve({ url: `http://127.0.0.1:${port}`, child }))
  })

type Seen = ReadonlyArray<readonly [number, string, string]>
const stats = async (receiverUrl: string): Promise<Seen> => (await fetch(`${receiverUrl}/stats`)).json() as Promise<Seen>
const waitFor = async (receiverUrl: string, count: number, timeoutMs: number) => {
  const all: Array<readonly [number, string, string]> = []
  const deadline = Date.now() + timeoutMs
  while (all.length < count && Date.now() < deadline) {
    all.push(...(await stats(receiverUrl)))
    if (all.length < count) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return all
}

/** The ceiling: undici alone POSTing the same body with headers of the same size, `Concurrency` at a time. */
const bareLoop = async (receiverUrl: string, body: string, count: number) => {
  const pool = new Pool(receiverUrl, { connections: Concurrency })
  const headers = { "content-type": "application/json", "x-service-signature": `sha256=${"0".repeat(64)}`, "x-service-event-id": randomUUID() }
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: Concurrency }, async () => {
    while (next++ < count) {
      const answer = await pool.request({ path: "/bare", method: "POST", headers, body })
      await answer.body.dump()
    }
  }))
  const seconds = (performance.now() - started) / 1000
  await pool.close()
  return count / seconds
}

/**
 * The floor (floor.ts): the same events to the same receiver at the same concurrency, through the
 * least a durable delivery does, in a process of its own measured as the dispatcher is.
 */
const floorRun = async (natsUrl: string, databaseUrl: string, receiver: { url: string; child: ChildProcess }, body: (id: string) => string) => {
  const nc = await connect({ servers: natsUrl })
  const jsm = await jetstreamManager(nc)
  await jsm.streams.add({ name: "BENCH_FLOOR", subjects: ["floor.>"] })
  await jsm.consumers.add("BENCH_FLOOR", { durable_name: "floor", ack_policy: AckPolicy.Explicit, max_ack_pending: 10_000 })
  const targets = Array.from({ length: Subscriptions }, (_, s) => ({ id: randomUUID(), url: `${receiver.url}/f${s}`, key: randomBytes(32).toString("base64") }))
  const child = spawn(process.execPath, ["--import", "tsx", "services/webhook-dispatcher/test/bench/floor.ts"], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, DATABASE_URL: databaseUrl, NATS_URL: natsUrl, FLOOR_STREAM: "BENCH_FLOOR", FLOOR_DURABLE: "floor", FLOOR_TARGETS: JSON.stringify(targets), FLOOR_EVENTS: String(Events) }
  })
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const next = async (expected: string) => {
    const line = await lines.next()
    if (line.value !== expected) throw new Error(`the floor process said ${line.value ?? "nothing"}, not ${expected}`)
  }
  try {
    await next("ready")
    const cpu = cpuMeter({ floor: () => [child.pid!], postgres: () => pidsNamed("postgres"), nats: () => pidsNamed("nats-server"), receiver: () => [receiver.child.pid!] })
    await stats(receiver.url)
    cpu.start()
    const js = jetstream(nc)
    await Promise.all(Array.from({ length: Events }, () => {
      const id = randomUUID()
      return js.publish("floor.application.created", new TextEncoder().encode(body(id)), { msgID: id })
    }))
    const received = await waitFor(receiver.url, Events * Subscriptions, 300_000)
    await next("done")
    const spent = cpu.stop()
    const times = received.map(([at]) => at)
    return { perSecond: (received.length - 1) / ((Math.max(...times) - Math.min(...times)) / 1000), spent, count: received.length }
  } finally {
    child.kill("SIGKILL")
    await jsm.streams.delete("BENCH_FLOOR")
    await nc.close()
  }
}

const main = async () => {
  const secret = randomBytes(32).toString("hex")
  const tenantId = randomUUID()
  const database = await createDatabase("benchhooks")
  const storeDir = mkdtempSync(join(tmpdir(), "bench-js-"))
  const nats = await restartableJetStream(storeDir)
  const receiver = await startReceiver()
  // What production runs: the compiled services (`npm run bench` builds them first); BENCH_SOURCES=1
  // runs the sources instead, whose profiles name every function.
  const supervisor = new ServiceSupervisor({ compiled: process.env["BENCH_SOURCES"] === undefined })
  try {
    log(`webhook deliveries (load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores) ...`)
    const [api, refAdmin, hookAdmin] = [await freePort(), await freePort(), await freePort()]
    const common = { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOST: "127.0.0.1", DATABASE_URL: database.url, NATS_URL: nats.url, INTERNAL_SECRET: secret, LOG_LEVEL: "Warn" }
    const refUrl = `http://127.0.0.1:${refAdmin}`
    const hookUrl = `http://127.0.0.1:${hookAdmin}`
    await supervisor.start("referential", { ...common, PORT: String(api), ADMIN_PORT: String(refAdmin) }, [refUrl])
    await supervisor.start("webhook-dispatcher", {
      ...common,
      ADMIN_PORT: String(hookAdmin),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      WEBHOOK_CONCURRENCY: String(Concurrency),
      WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: String(PerSubscription)
      // BENCH_PROFILE=<dir>: the dispatcher writes a CPU profile there when it stops. BENCH_NODE_ARGS:
      // more options of node for it (`--trace-gc`, heap sizes), after the production ones.
    }, [hookUrl], [...(process.env["BENCH_NODE_ARGS"]?.split(" ") ?? []), ...(process.env["BENCH_PROFILE"] === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env["BENCH_PROFILE"]}`])])
    for (let s = 0; s < Subscriptions; s++) {
      const created = await adminCall(secret, hookUrl, "webhook-dispatcher", "POST", `/admin/tenants/${tenantId}/webhooks`, { body: { url: `${receiver.url}/s${s}` } })
      if (created.status !== 201) throw new Error(`subscription not created: ${created.text}`)
    }
    const application = { code: "BENCH", name: "Bench", description: "x".repeat(400), criticality: "IMPORTANT", status: "ACTIVE" }
    const body = (id: string) => JSON.stringify({ id, type: "application.created", createdAt: new Date().toISOString(), tenantId, data: { ...application, revision: 1 } })

    // Throughput: events straight onto the stream, so that the dispatcher alone is measured.
    const nc = await connect({ servers: nats.url })
    const js = jetstream(nc)
    await stats(receiver.url)
    // Where the CPU of the throughput run goes, per delivery: the dispatcher, PostgreSQL (every
    // backend of the cluster, this run being the only load), the broker and the receiver.
    const cpu = cpuMeter({
      dispatcher: () => [supervisor.pid("webhook-dispatcher")],
      postgres: () => pidsNamed("postgres"),
      nats: () => [nats.pid],
      receiver: () => [receiver.child.pid!]
    })
    cpu.start()
    const publishing = Promise.all(Array.from({ length: Events }, (_, i) => {
      const id = randomUUID()
      return js.publish("events.referential.application.created", new TextEncoder().encode(body(id)), { msgID: id }).then(() => i)
    }))
    await publishing
    const received = await waitFor(receiver.url, Events * Subscriptions, 300_000)
    const times = received.map(([at]) => at)
    const spent = cpu.stop()
    const dispatcherMb = residentMb(supervisor.pid("webhook-dispatcher"))
    const deliveriesPerSecond = (received.length - 1) / ((Math.max(...times) - Math.min(...times)) / 1000)
    const floor = await floorRun(nats.url, database.url, receiver, body)
    // Warmed first: a cold undici and receiver made the ceiling vary from 18,000 to 31,000 POST/s
    // between runs, and the ratio with it.
    await bareLoop(receiver.url, body(randomUUID()), Events)
    await stats(receiver.url)
    const barePerSecond = await bareLoop(receiver.url, body(randomUUID()), Events * Subscriptions)
    await stats(receiver.url)

    // Latency: one change at a time through the referential's admin API, from its answer (after the commit) to the first POST;
    // a plain subscription to the stream's subjects tells how much of it is the relay's.
    const published = new Map<string, number>()
    nc.subscribe("events.referential.>", { callback: (_error, message) => void published.set(message.json<{ id: string }>().id, Date.now()) })
    await nc.flush()
    const latencies: Array<number> = []
    const relayLatencies: Array<number> = []
    for (let n = 0; n < LatencySamples; n++) {
      const put = await adminCall(secret, refUrl, "referential", "PUT", `/admin/tenants/${tenantId}/applications/LAT-${n}`, { body: { name: `Latency ${n}` } })
      if (put.status !== 200) throw new Error(`PUT answered ${put.status}: ${put.text}`)
      const committed = Date.now()
      // All of its deliveries before the next change, so that every POST seen belongs to this one.
      const posts = await waitFor(receiver.url, Subscriptions, 10_000)
      if (posts.length !== Subscriptions) throw new Error(`change ${n} was delivered ${posts.length} times, not ${Subscriptions}`)
      latencies.push(Math.min(...posts.map(([at]) => at)) - committed)
      relayLatencies.push((published.get(posts[0]![1]) ?? Number.NaN) - committed)
    }

    await nc.close()
    const ratio = deliveriesPerSecond / barePerSecond
    const p99 = percentile(latencies, 99)
    log("")
    log(`webhook deliveries: ${Subscriptions} subscriptions x ${PerSubscription} in flight = ${Concurrency} concurrent POSTs; ${Events} events (${received.length} deliveries)`)
    log(`  dispatcher     ${deliveriesPerSecond.toFixed(0).padStart(7)} deliveries/s (signed, recorded in PostgreSQL)`)
    log(`  bare undici    ${barePerSecond.toFixed(0).padStart(7)} POST/s at the same concurrency; ratio ${ratio.toFixed(2)}`)
    log(`  CPU per delivery: ${perDelivery(spent, received.length)}; dispatcher resident after it: ${dispatcherMb.toFixed(0)} MB`)
    log(`  floor          ${floor.perSecond.toFixed(0).padStart(7)} deliveries/s (floor.ts: signed, recorded, nothing more); ratio ${(floor.perSecond / barePerSecond).toFixed(2)}`)
    log(`  CPU per delivery: ${perDelivery(floor.spent, floor.count)}`)
    log(`  dispatcher / floor ${(deliveriesPerSecond / floor.perSecond).toFixed(2)}`)
    log(`  commit -> first POST: p50 ${percentile(latencies, 50)} ms, p99 ${p99} ms over ${LatencySamples} changes`)
    log(`  of which commit -> on NATS (the relay): p50 ${percentile(relayLatencies, 50)} ms, p99 ${percentile(relayLatencies, 99)} ms`)
    log(`${ratio >= 0.5 ? "PASS" : "FAIL"}  deliveries/s at least 0.5 of bare undici: ${ratio.toFixed(2)}`)
    log(`${p99 < 250 ? "PASS" : "FAIL"}  commit to first attempt p99 under 250 ms: ${p99} ms`)
    if (ratio < 0.5 || p99 >= 250) process.exitCode = 1
  } finally {
    await supervisor.stopAll()
    receiver.child.kill("SIGTERM")
    await nats.stop()
    rmSync(storeDir, { recursive: true, force: true })
    await database.drop()
  }
}

main().then(() => process.exit(process.exitCode ?? 0), (error) => {
  console.error(error)
  process.exit(1)
})
