/**
 * Latency of the referential's whole-forest reads on a seeded tenant, measured against a running
 * service (not part of `npm test`). Seeds a fresh tenant through the admin API, then times
 * sequential GETs with a fresh signed assertion each, as the gateway would send them.
 *
 *   INTERNAL_SECRET=... REFERENTIAL_URL=http://127.0.0.1:8082 REFERENTIAL_ADMIN_URL=http://127.0.0.1:8083 \
 *     npx tsx services/referential/test/bench/tree-latency.ts [requests] [applications] [functions]
 */
import { CallerIdentity } from "@portfolio/domain"
import { AssertionHeader, signAssertion } from "@portfolio/platform/security"
import { randomUUID } from "node:crypto"

const report = (line: string) => process.stdout.write(`${line}\n`)
const secret = process.env.INTERNAL_SECRET ?? ""
const publicUrl = process.env.REFERENTIAL_URL ?? "http://127.0.0.1:8082"
const adminUrl = process.env.REFERENTIAL_ADMIN_URL ?? "http://127.0.0.1:8083"
const [requests = 300, applications = 2_000, functions = 5_000] = process.argv.slice(2).map(Number)

const tenantId = randomUUID()
const call = async (base: string, identity: CallerIdentity, method: string, path: string, body?: unknown) => {
  const json = body === undefined ? undefined : JSON.stringify(body)
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      [AssertionHeader]: signAssertion(secret, identity, { audience: "referential", method, target: path, body: json }),
      ...(json === undefined ? {} : { "content-type": "application/json" })
    },
    ...(json === undefined ? {} : { body: json })
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text
}

const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "bench", role: "operator", scope: "admin" })
const reader = new CallerIdentity({ tenantId, subject: "bench-reader", role: "viewer", scope: "read" })

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

const seedStart = performance.now()
report(`seed ${await call(adminUrl, operator, "POST", `/admin/tenants/${tenantId}/demo-seed`, { applications, functions, maxDepth: 6, seed: 7 })}`)
report(`seed took ${(performance.now() - seedStart).toFixed(0)} ms`)

for (const path of ["/api/v1/referentiel/functions", "/api/v1/referentiel/functions/flat", "/api/v1/referentiel/functions/posi", "/api/v1/referentiel/applications/APP-0042"]) {
  const first = performance.now()
  const body = await call(publicUrl, reader, "GET", path)
  const firstMs = performance.now() - first
  const times: Array<number> = []
  for (let i = 0; i < requests; i++) {
    const start = performance.now()
    await call(publicUrl, reader, "GET", path)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  report(
    `${path}: ${(body.length / 1024).toFixed(0)} KiB, first ${firstMs.toFixed(1)} ms, then n=${requests} ` +
      `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms`
  )
}
