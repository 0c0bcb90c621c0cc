/**
 * `npm run bench`: throughput and latency of a single-application read (32 at a time and one at a
 * time) and of the function tree, side by side with the ceilings measured in the same run (a bare
 * node:http server answering the same bytes, node:http + node-postgres running the referential's
 * SELECT, an Effect HttpApi hello world, and a bare forwarder in front of the referential: what any
 * proxy costs at the least), the referential called directly with a signed assertion, and the same
 * requests through the gateway with a PAT; then the compression of the large answers
 * and every service's resident memory. The services run compiled, as in production (`npm run build`);
 * wrk sends the load (test/bench/load.ts). Prints each target as PASS or FAIL (docs/architecture.md,
 * "Performance"). Starts its own processes on a fresh database; not part of `npm test`.
 */
import { CallerIdentity } from "@portfolio/domain"
import { AssertionHeader, signAssertion } from "@portfolio/platform/security"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import http from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { startSystem } from "../../deploy/local/system.js"
import { cliJson } from "../support/cli.js"
import { startCeiling } from "./ceilings.js"
import { createDatabase } from "@portfolio/platform/testing"
import { cpuMeter, pidsNamed, residentMb } from "../support/cpuTime.js"
import { type LoadOptions, type LoadResult, runLoad } from "./load.js"

const applications = 2_000
const functions = 5_000
const warmupMs = 2_000
const durationMs = 8_000

const log = (line: string) => process.stdout.write(`${line}\n`)


/** The bytes of `url`'s answer on the wire for an `Accept-Encoding`, and the encoding the server chose. */
const wireSize = (url: string, headers: Record<string, string>, encoding: string) =>
  new Promise<{ bytes: number; encoding: string }>((resolve, reject) => {
    const request = http.request(url, { headers: { ...headers, "accept-encoding": encoding } }, (response) => {
      let bytes = 0
      response.on("data", (chunk: Buffer) => (bytes += chunk.length))
      response.on("end", () => resolve({ bytes, encoding: String(response.headers["content-encoding"] ?? "identity") }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end()
  })

type Row = { readonly target: string; readonly result: LoadResult }

const printRows = (title: string, concurrency: number, rows: ReadonlyArray<Row>) => {
  log(`${title}, ${concurrency} at a time`)
  for (const { result: r, target } of rows) {
    log(
      `  ${target.padEnd(34)}${r.requestsPerSecond.toFixed(0).padStart(8)} req/s${r.p50Ms.toFixed(2).padStart(8)} ms p50${r.p99Ms.toFixed(2).padStart(8)} ms p99` +
        `${String(r.errors).padStart(5)} errors${String(r.bytesPerResponse).padStart(9)} B`
    )
  }
}

const main = async () => {
  const secret = randomBytes(32).toString("hex")
  const database = await createDatabase("bench")
  const scratch = mkdtempSync(join(tmpdir(), "portfolio-bench-"))
  const ceilings: Array<ChildProcess> = []
  let system: Awaited<ReturnType<typeof startSystem>> | undefined
  try {
    log(`starting the system on database ${database.name} (load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores) ...`)
    system = await startSystem({
      databaseUrl: database.url,
      quiet: true,
      // What production runs: the compiled services (`npm run bench` builds them first).
      compiled: true,
      // The limiter stays on: far from its limit, as a busy integration is most of the time.
      env: {
        INTERNAL_SECRET: secret,
        RATE_LIMIT_PER_MINUTE: "100000000",
        LOG_LEVEL: "Warn"
      },
      // BENCH_PROFILE=<dir>: every service writes a CPU profile there when it stops.
      ...(process.env["BENCH_PROFILE"] === undefined ? {} : { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${process.env["BENCH_PROFILE"]}`] })
    })
    const env = { ...system.env, INTERNAL_SECRET: secret }
    const tenant = await cliJson(["tenant", "create", "bench", "--admin-email", "admin@bench.example"], { env })
    const pat = await cliJson(["pat", "create", "--tenant", "bench", "--email", "admin@bench.example", "--scope", "read"], { env })
    log(`seeding ${applications} applications and ${functions} functions ...`)
    const seedStart = performance.now()
    const seeded = await cliJson(["seed", "demo", "--tenant", "bench", "--applications", String(applications), "--functions", String(functions)], { env })
    log(`seeded ${JSON.stringify(seeded)} in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`)

    const gatewayBase = system.baseUrl.replace("localhost", "127.0.0.1")
    const gatewayHeaders = { authorization: `Bearer ${pat.token}` }
    const list = await fetch(`${gatewayBase}/referentiel/applications`, { headers: gatewayHeaders })
    const codes = ((await list.json()) as Array<{ code: string }>).map((a) => a.code)
    if (codes.length !== applications) throw new Error(`expected ${applications} applications, the list has ${codes.length}`)

    const identity = new CallerIdentity({ tenantId: tenant.tenantId, subject: tenant.adminUserSub, role: "tenant-admin", scope: "read" })
    const referential = system.serviceUrls.referential.replace("localhost", "127.0.0.1")
    const gateway = system.gatewayUrl.replace("localhost", "127.0.0.1")
    // An assertion serves once: wrk signs a fresh one per request from this one, as the gateway
    // does (its cost is the load generator's here).
    const signedFor = (path: string) => signAssertion(secret, identity, { audience: "referential", method: "GET", target: path })
    const assertionFor = (path: string) => ({ oneUseToken: { header: AssertionHeader, secret, token: signedFor(path) } })
    type Credentials = Pick<LoadOptions, "headers" | "oneUseToken">
    const measure = (url: string, credentials: Credentials, concurrency: number) => runLoad({ url, ...credentials, concurrency, warmupMs, durationMs })
    // Where the CPU of a row goes, per request: the services on the path, PostgreSQL, NATS and
    // wrk (which also signs the direct row's assertions), which reports its own.
    const pidOf = (service: string) => system!.processes.filter((p) => p.service === service).map((p) => p.pid)
    const cpu = cpuMeter({
      referential: () => pidOf("referential"),
      gateway: () => pidOf("gateway"),
      postgres: () => pidsNamed("postgres"),
      nats: () => pidsNamed("nats-server")
    })
    const cpuPerRequest: Array<string> = []
    const measureCpu = async (label: string, url: string, credentials: Credentials, concurrency: number) => {
      cpu.start()
      const result = await measure(url, credentials, concurrency)
      const spent = { ...cpu.stop(), wrk: result.loadCpuSeconds }
      // Warm-up included: the rate over the measured part stands for the whole row.
      const requests = result.requestsPerSecond * ((warmupMs + durationMs) / 1000)
      cpuPerRequest.push(`  ${label.padEnd(34)}${Object.entries(spent).map(([group, seconds]) => `${group} ${((seconds * 1e6) / requests).toFixed(0)} us`).join(", ")}`)
      return result
    }

    // The single-application read, against its three ceilings.
    const appPath = `/api/v1/referentiel/applications/${codes[Math.floor(codes.length / 2)]}`
    const sample = await fetch(`${referential}${appPath}`, { headers: { [AssertionHeader]: signedFor(appPath) } })
    if (sample.status !== 200) throw new Error(`GET ${appPath} on the referential answered ${sample.status}: ${await sample.text()}`)
    const appBody = join(scratch, "application.json")
    writeFileSync(appBody, Buffer.from(await sample.arrayBuffer()))
    const bare = await startCeiling("bare-server.ts", [appBody])
    const nodePg = await startCeiling("pg-server.ts", [database.url, tenant.tenantId])
    const hello = await startCeiling("effect-hello.ts", [])
    // The least any proxy in front of the referential costs here: node:http in, undici out, the
    // assertion passed on, nothing else (the gateway's own forwarding, test/bench/forward-undici.ts).
    const forwarder = await startCeiling("forward-undici.ts", [referential, AssertionHeader])
    ceilings.push(bare.child, nodePg.child, hello.child, forwarder.child)
    const single: Record<number, Record<string, LoadResult>> = {}
    for (const concurrency of [32, 1]) {
      log(`measuring the single-application read (${appPath}), ${concurrency} at a time ...`)
      const rows: Array<Row> = [
        { target: "bare node:http (fixed body)", result: await measure(`${bare.url}${appPath}`, {}, concurrency) },
        { target: "node:http + node-postgres", result: await measure(`${nodePg.url}${appPath}`, {}, concurrency) },
        { target: "Effect HttpApi hello world", result: await measure(`${hello.url}${appPath}`, {}, concurrency) },
        { target: "referential direct", result: await measureCpu(`referential direct, ${concurrency} at a time`, `${referential}${appPath}`, assertionFor(appPath), concurrency) },
        { target: "bare forwarder + referential", result: await measure(`${forwarder.url}${appPath}`, assertionFor(appPath), concurrency) },
        { target: "gateway (PAT, limiter on)", result: await measureCpu(`gateway, ${concurrency} at a time`, `${gateway}${appPath}`, { headers: gatewayHeaders }, concurrency) }
      ]
      single[concurrency] = Object.fromEntries(rows.map((row) => [row.target, row.result]))
      printRows("single application", concurrency, rows)
      log("CPU per request")
      for (const line of cpuPerRequest.splice(0)) log(line)
    }
    for (const child of ceilings) child.kill("SIGTERM")

    // The function tree, one request at a time: the time to answer it, not queueing behind others.
    const treePath = "/api/v1/referentiel/functions"
    log(`measuring the function tree (${functions} nodes), 1 at a time ...`)
    const treeRows: Array<Row> = [
      { target: "referential direct", result: await measure(`${referential}${treePath}`, assertionFor(treePath), 1) },
      { target: "gateway (PAT, limiter on)", result: await measure(`${gateway}${treePath}`, { headers: gatewayHeaders }, 1) }
    ]
    printRows("function tree", 1, treeRows)

    // Compression of the large answers, as a client asking for it receives them through the gateway.
    const compression: Array<{ name: string; identity: number; gzip: { bytes: number; encoding: string }; br: { bytes: number; encoding: string } }> = []
    for (const [name, path] of [["function tree", treePath], ["application list", "/api/v1/referentiel/applications"]] as const) {
      const url = `${gateway}${path}`
      compression.push({
        name,
        identity: (await wireSize(url, gatewayHeaders, "identity")).bytes,
        gzip: await wireSize(url, gatewayHeaders, "gzip"),
        br: await wireSize(url, gatewayHeaders, "br")
      })
    }
    log("large answers through the gateway, bytes on the wire")
    for (const c of compression) {
      log(`  ${c.name.padEnd(20)} identity ${c.identity}, gzip ${c.gzip.bytes} (${c.gzip.encoding}), br ${c.br.bytes} (${c.br.encoding})`)
    }

    const memory = system.processes.map(({ pid, service }) => ({ service, mb: residentMb(pid) }))
    log(`resident memory at the end: ${memory.map((m) => `${m.service} ${m.mb.toFixed(0)} MB`).join(", ")}`)

    log("")
    log(`${cpus().length} cores; load average ${loadavg().map((n) => n.toFixed(1)).join(" ")} (1, 5, 15 min) at the end of the run`)
    log(`wrk, one thread, closed loop over keep-alive connections, a ${warmupMs / 1000} s warm-up run then ${durationMs / 1000} s measured per row, loopback`)
    log("p50 and p99 as wrk gives them: corrected for coordinated omission; bytes per answer include its head")
    const at32 = single[32]!
    const at1 = single[1]!
    const rps = (row: LoadResult) => row.requestsPerSecond
    const ceiling32 = at32["node:http + node-postgres"]!
    const direct32 = at32["referential direct"]!
    const gateway32 = at32["gateway (PAT, limiter on)"]!
    const ceiling1 = at1["node:http + node-postgres"]!
    const direct1 = at1["referential direct"]!
    const gateway1 = at1["gateway (PAT, limiter on)"]!
    const hello32 = at32["Effect HttpApi hello world"]!
    const bare32 = at32["bare node:http (fixed body)"]!
    const forwarder32 = at32["bare forwarder + referential"]!
    log(
      `ratios, 32 at a time: direct / node+pg ${(rps(direct32) / rps(ceiling32)).toFixed(2)}, gateway / direct ${(rps(gateway32) / rps(direct32)).toFixed(2)}, ` +
        `bare forwarder / direct ${(rps(forwarder32) / rps(direct32)).toFixed(2)}, gateway / bare forwarder ${(rps(gateway32) / rps(forwarder32)).toFixed(2)}, ` +
        `direct / HttpApi hello ${(rps(direct32) / rps(hello32)).toFixed(2)}, HttpApi hello / bare ${(rps(hello32) / rps(bare32)).toFixed(2)}, node+pg / bare ${(rps(ceiling32) / rps(bare32)).toFixed(2)}`
    )
    const tree = treeRows[1]!.result
    const noErrors = [...Object.values(at32), ...Object.values(at1), ...treeRows.map((r) => r.result)].every((r) => r.errors === 0)
    const targets = [
      { name: "no failed request in any row", measured: noErrors ? "none" : "some", pass: noErrors },
      { name: "single read, 32 at a time: direct >= 0.5 x node+pg", measured: `${(rps(direct32) / rps(ceiling32)).toFixed(2)} x`, pass: rps(direct32) >= 0.5 * rps(ceiling32) },
      { name: "single read, 32 at a time: gateway >= 0.8 x direct", measured: `${(rps(gateway32) / rps(direct32)).toFixed(2)} x`, pass: rps(gateway32) >= 0.8 * rps(direct32) },
      { name: "single read, 1 at a time: direct p50 <= 3 x node+pg", measured: `${(direct1.p50Ms / ceiling1.p50Ms).toFixed(2)} x (${direct1.p50Ms.toFixed(2)} ms)`, pass: direct1.p50Ms <= 3 * ceiling1.p50Ms },
      { name: "single read, 1 at a time: gateway adds <= 1 ms at p50", measured: `+${(gateway1.p50Ms - direct1.p50Ms).toFixed(2)} ms`, pass: gateway1.p50Ms - direct1.p50Ms <= 1 },
      { name: "function tree through the gateway: p99 < 50 ms", measured: `${tree.p99Ms.toFixed(1)} ms`, pass: tree.p99Ms < 50 },
      ...compression.flatMap((c) => [
        { name: `${c.name}: gzip at least 5x smaller`, measured: `${(c.identity / c.gzip.bytes).toFixed(1)} x`, pass: c.gzip.encoding === "gzip" && c.identity >= 5 * c.gzip.bytes },
        { name: `${c.name}: br at least 5x smaller`, measured: `${(c.identity / c.br.bytes).toFixed(1)} x`, pass: c.br.encoding === "br" && c.identity >= 5 * c.br.bytes }
      ]),
      ...memory.map((m) => ({ name: `${m.service} under 150 MB resident`, measured: `${m.mb.toFixed(0)} MB`, pass: m.mb < 150 }))
    ]
    log("")
    for (const target of targets) log(`${target.pass ? "PASS" : "FAIL"}  ${target.name}: ${target.measured}`)
    if (targets.some((target) => !target.pass)) process.exitCode = 1
  } finally {
    for (const child of ceilings) child.kill("SIGTERM")
    await system?.stop()
    await database.drop()
    rmSync(scratch, { recursive: true, force: true })
  }
}

await main()
