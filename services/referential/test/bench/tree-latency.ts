/**
 * Latency of the referential's whole-forest reads on a seeded tenant, measured against a running
 * service (not part of `npm test`). Seeds a fresh tenant through the admin API, then times
 * sequential GETs with a fresh signed assertion each, as the gateway would send them.
 *
 *   INTERNAL_SECRET=... REFERENTIAL_URL=http://127.0.0.1:8082 REFERENTIAL_ADMIN_URL=http://127.0.0.1:8083 \
 *     npx tsx services/referential/test/bench/tree-latency.ts [requests] [applications] [functions]
 */
import { randomUUID } from "node:crypto"
import { adminUrl, call, operator, percentile, publicUrl, readerOf, report, timesOf } from "./SignedCalls.js"

const [requests = 300, applications = 2_000, functions = 5_000] = process.argv.slice(2).map(Number)
const tenantId = randomUUID()
const reader = readerOf(tenantId)

const seedStart = performance.now()
report(`seed ${await call(adminUrl, operator, "POST", `/admin/tenants/${tenantId}/demo-seed`, { applications, functions, maxDepth: 6, seed: 7 })}`)
report(`seed took ${(performance.now() - seedStart).toFixed(0)} ms`)

for (const path of ["/api/v1/referentiel/functions", "/api/v1/referentiel/functions/flat", "/api/v1/referentiel/functions/posi", "/api/v1/referentiel/applications/APP-0042"]) {
  const first = performance.now()
  const body = await call(publicUrl, reader, "GET", path)
  const firstMs = performance.now() - first
  const times = await timesOf(requests, () => call(publicUrl, reader, "GET", path))
  report(
    `${path}: ${(body.length / 1024).toFixed(0)} KiB, first ${firstMs.toFixed(1)} ms, then n=${requests} ` +
      `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms`
  )
}
