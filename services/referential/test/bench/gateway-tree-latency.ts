/**
 * The tree through the whole system: starts gateway, referential and provisioning on a fresh
 * database, seeds a tenant with 2,000 applications and 5,000 functions, and times sequential
 * GETs of the tree (and the other forests, and one application) with a read PAT, as a client
 * would, alternating with the same GETs sent to the service directly. Not part of `npm test`.
 *
 *   npx tsx services/referential/test/bench/gateway-tree-latency.ts [requests]
 */
import { CallerIdentity } from "@portfolio/domain"
import { AssertionHeader, signAssertion } from "@portfolio/platform/security"
import { randomBytes } from "node:crypto"
import { startSystem } from "../../../../deploy/local/system.js"
import { cliJson } from "../../../../test/support/cli.js"
import { createDatabase } from "@portfolio/platform/testing"

const report = (line: string) => process.stdout.write(`${line}\n`)
const requests = Number(process.argv[2] ?? 500)
const secret = randomBytes(32).toString("hex")
const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "bench", role: "operator", scope: "admin" })
const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

const database = await createDatabase("bench")
const system = await startSystem({
  databaseUrl: database.url,
  env: { INTERNAL_SECRET: secret, LOG_LEVEL: "Error", RATE_LIMIT_PER_MINUTE: "1000000" },
  quiet: true
})
try {
  const env = { ...system.env, INTERNAL_SECRET: secret }
  const tenant = await cliJson(["tenant", "create", "bench", "--admin-email", "admin@bench.example"], { env })
  const pat = await cliJson(["pat", "create", "--tenant", "bench", "--email", "admin@bench.example", "--scope", "read"], { env })
  const seedPath = `/admin/tenants/${tenant.tenantId}/demo-seed`
  const seedStart = performance.now()
  const seedRequest = JSON.stringify({ applications: 2_000, functions: 5_000, maxDepth: 6, seed: 42 })
  const seeded = await fetch(`${system.adminUrls.referential}${seedPath}`, {
    method: "POST",
    headers: {
      [AssertionHeader]: signAssertion(secret, operator, { audience: "referential", method: "POST", target: seedPath, body: seedRequest }),
      "content-type": "application/json"
    },
    body: seedRequest
  })
  report(`seed: ${seeded.status} ${await seeded.text()} in ${(performance.now() - seedStart).toFixed(0)} ms`)

  // Gateway and direct calls alternate, so that both see the same load of the machine.
  const reader = new CallerIdentity({ tenantId: tenant.tenantId, subject: "bench-reader", role: "viewer", scope: "read" })
  const timed = async (url: string, headers: Record<string, string>) => {
    const start = performance.now()
    const response = await fetch(url, { headers })
    const body = await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${url}: ${response.status}`)
    return { ms: performance.now() - start, bytes: body.byteLength }
  }
  const summary = (times: Array<number>) => {
    times.sort((a, b) => a - b)
    return `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms`
  }
  for (const path of ["/referentiel/functions", "/referentiel/functions/flat", "/referentiel/functions/posi", "/referentiel/applications/APP-0042"]) {
    const viaGateway = () => timed(`${system.baseUrl}${path}`, { authorization: `Bearer ${pat.token}` })
    const servicePath = `/api/v1${path}`
    const direct = () =>
      timed(`${system.serviceUrls.referential}${servicePath}`, { [AssertionHeader]: signAssertion(secret, reader, { audience: "referential", method: "GET", target: servicePath }) })
    const first = await viaGateway()
    const gateway: Array<number> = []
    const service: Array<number> = []
    for (let i = 0; i < requests; i++) {
      gateway.push((await viaGateway()).ms)
      service.push((await direct()).ms)
    }
    report(`${path}: ${(first.bytes / 1024).toFixed(0)} KiB, first ${first.ms.toFixed(1)} ms; n=${requests} each`)
    report(`  through the gateway: ${summary(gateway)}`)
    report(`  service directly:    ${summary(service)}`)
  }
} finally {
  await system.stop()
  await database.drop()
}
