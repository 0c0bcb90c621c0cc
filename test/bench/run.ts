/**
 * `npm run bench`: throughput and latency of a single-application read and of the function tree,
 * side by side for a bare node:http server (the machine's ceiling), the referential service called
 * directly with a signed assertion, and the same requests through the gateway with a PAT.
 * Starts its own processes on a fresh database; not part of `npm test`.
 */
import { CallerIdentity } from "@portfolio/domain"
import { signAssertion } from "@portfolio/platform"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { startSystem } from "../../deploy/local/system.js"
import { cliJson, repoRoot } from "../support/cli.js"
import { createDatabase } from "@portfolio/platform/testing/FreshDatabase"
import { type LoadResult, runLoad } from "./load.js"

const applications = 2_000
const functions = 5_000
const warmupMs = 2_000
const durationMs = 8_000
const scenarios = [
  { name: "single application", concurrency: 32 },
  // One request at a time: the target is the time to answer the tree, not queueing behind others.
  { name: "function tree (5,000 nodes)", concurrency: 1 }
] as const

const log = (line: string) => process.stdout.write(`${line}\n`)

const startBareServer = (bodyFile: string) =>
  new Promise<{ url: string; child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/bench/bare-server.ts", bodyFile], { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`bare server exited ${code}`)))
    createInterface({ input: child.stdout! }).once("line", (port) => resolve({ url: `http://127.0.0.1:${port}`, child }))
  })

const main = async () => {
  const secret = randomBytes(32).toString("hex")
  const database = await createDatabase("bench")
  const scratch = mkdtempSync(join(tmpdir(), "portfolio-bench-"))
  const bare: Array<ChildProcess> = []
  let system: Awaited<ReturnType<typeof startSystem>> | undefined
  try {
    log(`starting the system on database ${database.name} (load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores) ...`)
    system = await startSystem({
      databaseUrl: database.url,
      quiet: true,
      env: { INTERNAL_SECRET: secret, RATE_LIMIT_PER_MINUTE: "100000000", LOG_LEVEL: "Warn" }
    })
    const env = { ...system.env, INTERNAL_SECRET: secret }
    const tenant = await cliJson(["tenant", "create", "bench", "--admin-email", "admin@bench.example"], { env })
    const pat = await cliJson(["pat", "create", "--tenant", "bench", "--email", "admin@bench.example", "--scope", "read"], { env })
    log(`seeding ${applications} applications and ${functions} functions ...`)
    const seedStart = performance.now()
    const seeded = await cliJson(["seed", "demo", "--tenant", "bench", "--applications", String(applications), "--functions", String(functions)], { env })
    log(`seeded ${JSON.stringify(seeded)} in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`)

    const gatewayBase = system.baseUrl.replace("localhost", "127.0.0.1")
    const list = await fetch(`${gatewayBase}/referentiel/applications`, { headers: { authorization: `Bearer ${pat.token}` } })
    const codes = ((await list.json()) as Array<{ code: string }>).map((a) => a.code)
    if (codes.length !== applications) throw new Error(`expected ${applications} applications, the list has ${codes.length}`)
    const paths = [`/api/v1/referentiel/applications/${codes[Math.floor(codes.length / 2)]}`, "/api/v1/referentiel/functions"]

    const identity = new CallerIdentity({ tenantId: tenant.tenantId, subject: tenant.adminUserSub, role: "tenant-admin", scope: "read" })
    const results: Array<{ scenario: string; concurrency: number; rows: Record<"bare" | "direct" | "gateway", LoadResult> }> = []
    for (const [i, scenario] of scenarios.entries()) {
      const path = paths[i]!
      const gatewayUrl = `${system.gatewayUrl.replace("localhost", "127.0.0.1")}${path}`
      const directUrl = `${system.serviceUrls.referential.replace("localhost", "127.0.0.1")}${path}`
      const gatewayHeaders = { authorization: `Bearer ${pat.token}` }
      // An assertion serves once: node reads the headers object at each request, so a getter signs
      // a fresh one per request, as the gateway does (its cost is the load generator's here).
      const directHeaders = {
        get "x-portfolio-assertion"() {
          return signAssertion(secret, identity, { audience: "referential", method: "GET", target: path })
        }
      }

      const sample = await fetch(directUrl, { headers: directHeaders })
      if (sample.status !== 200) throw new Error(`GET ${path} on the referential answered ${sample.status}: ${await sample.text()}`)
      const bodyFile = join(scratch, `body-${i}.json`)
      writeFileSync(bodyFile, Buffer.from(await sample.arrayBuffer()))
      const server = await startBareServer(bodyFile)
      bare.push(server.child)

      const measure = (url: string, headers: Record<string, string>) =>
        runLoad({ url, headers, concurrency: scenario.concurrency, warmupMs, durationMs })
      log(`measuring ${scenario.name} (${path}) ...`)
      const rows = {
        bare: await measure(`${server.url}${path}`, {}),
        direct: await measure(directUrl, directHeaders),
        gateway: await measure(gatewayUrl, gatewayHeaders)
      }
      server.child.kill("SIGTERM")
      results.push({ scenario: scenario.name, concurrency: scenario.concurrency, rows })
    }

    log("")
    // Every process of the chain shares these cores with the load generator: report how busy they were.
    log(`${cpus().length} cores; load average ${loadavg().map((n) => n.toFixed(1)).join(" ")} (1, 5, 15 min) at the end of the run`)
    log(`closed loop, keep-alive, ${warmupMs / 1000} s warm-up + ${durationMs / 1000} s measured per row, loopback`)
    log(`${"scenario".padEnd(30)}${"target".padEnd(22)}${"conc".padStart(5)}${"req/s".padStart(10)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"errors".padStart(8)}${"bytes".padStart(10)}`)
    for (const { concurrency, rows, scenario } of results) {
      for (const [target, r] of [["bare node:http", rows.bare], ["referential direct", rows.direct], ["gateway (PAT)", rows.gateway]] as const) {
        log(
          `${scenario.padEnd(30)}${target.padEnd(22)}${String(concurrency).padStart(5)}${r.requestsPerSecond.toFixed(0).padStart(10)}` +
            `${r.p50Ms.toFixed(2).padStart(9)}${r.p99Ms.toFixed(2).padStart(9)}${String(r.errors).padStart(8)}${String(r.bytesPerResponse).padStart(10)}`
        )
      }
      log(
        `${"".padEnd(30)}ratios: gateway/direct ${(rows.gateway.requestsPerSecond / rows.direct.requestsPerSecond).toFixed(2)}, ` +
          `direct/bare ${(rows.direct.requestsPerSecond / rows.bare.requestsPerSecond).toFixed(2)}`
      )
    }

    const single = results[0]!.rows
    const tree = results[1]!.rows
    const targets = [
      {
        name: "gateway throughput >= 0.5 x direct on the single-application read",
        measured: `${(single.gateway.requestsPerSecond / single.direct.requestsPerSecond).toFixed(2)} x`,
        pass: single.gateway.requestsPerSecond >= 0.5 * single.direct.requestsPerSecond && single.gateway.errors === 0
      },
      {
        name: "function tree p99 through the gateway < 50 ms",
        measured: `${tree.gateway.p99Ms.toFixed(1)} ms at concurrency ${results[1]!.concurrency}`,
        pass: tree.gateway.p99Ms < 50 && tree.gateway.errors === 0
      }
    ]
    log("")
    for (const target of targets) log(`${target.pass ? "PASS" : "FAIL"}  ${target.name}: ${target.measured}`)
    if (targets.some((target) => !target.pass)) process.exitCode = 1
  } finally {
    for (const child of bare) child.kill("SIGTERM")
    await system?.stop()
    await database.drop()
    rmSync(scratch, { recursive: true, force: true })
  }
}

await main()
