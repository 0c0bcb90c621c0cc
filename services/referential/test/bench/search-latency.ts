/**
 * Latency of the function search (`/functions/search?q=`) against a running referential (not part
 * of `npm test`): sequential GETs with a fresh signed assertion each, as the gateway would send
 * them, on a tenant seeded beforehand (TENANT_ID) or seeded here through the admin API.
 *
 *   INTERNAL_SECRET=... REFERENTIAL_URL=http://127.0.0.1:8082 REFERENTIAL_ADMIN_URL=http://127.0.0.1:8083 \
 *     [TENANT_ID=...] npx tsx services/referential/test/bench/search-latency.ts [requests] [applications] [functions]
 */
import { randomUUID } from "node:crypto"
import { adminUrl, call, operator, percentile, publicUrl, readerOf, report, timesOf } from "./SignedCalls.js"

const [requests = 50, applications = 10_000, functions = 25_000] = process.argv.slice(2).map(Number)
const queries = (process.env.QUERIES ?? "q=pay,q=pay&limit=100,q=BF07.03.07,q=zzq,q=pa,q=pa&limit=100").split(",")
const tenantId = process.env.TENANT_ID ?? randomUUID()
const reader = readerOf(tenantId)

if (process.env.TENANT_ID === undefined) {
  const seedStart = performance.now()
  report(`seed ${await call(adminUrl, operator, "POST", `/admin/tenants/${tenantId}/demo-seed`, { applications, functions, maxDepth: 6, seed: 42 })}`)
  report(`seed took ${(performance.now() - seedStart).toFixed(0)} ms`)
}

for (const query of queries) {
  const path = `/api/v1/referentiel/functions/search?${query}`
  const body = await call(publicUrl, reader, "GET", path)
  const items = (JSON.parse(body) as ReadonlyArray<unknown>).length
  const times = await timesOf(requests, () => call(publicUrl, reader, "GET", path))
  report(
    `${query.padEnd(22)} ${String(items).padStart(5)} items ${(body.length / 1024).toFixed(0).padStart(5)} KiB  n=${requests} ` +
      `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`
  )
}
