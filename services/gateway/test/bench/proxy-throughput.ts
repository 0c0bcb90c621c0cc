/**
 * Throughput of the gateway's proxy path against a trivial upstream, beside the same upstream
 * called directly: `npx tsx services/gateway/test/bench/proxy-throughput.ts`. Starts the gateway
 * process on a fresh database and a bare upstream on loopback; not part of `npm test`.
 */
import { CallerIdentity } from "@portfolio/domain"
import { AssertionHeader, signAssertion } from "@portfolio/platform/security"
import { type ChildProcess, spawn } from "node:child_process"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { createDatabase } from "@portfolio/platform/testing"
import { runLoad } from "../../../../test/bench/load.js"
import { cpuSeconds } from "../../../../test/support/cpuTime.js"

const body = JSON.stringify([{ code: "CRM-01", name: "CRM" }])
const log = (line: string) => process.stdout.write(`${line}\n`)

const listen = (server: http.Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

const freePort = async () => {
  const server = http.createServer()
  const port = await listen(server)
  await new Promise((resolve) => server.close(resolve))
  return port
}


const waitReady = async (url: string) => {
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(url).then((r) => r.ok, () => false)
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} never became ready`)
}

const main = async () => {
  let served = 0
  const upstream = http.createServer((_req, res) => {
    served++
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
  const upstreamPort = await listen(upstream)
  const database = await createDatabase("gwbench")
  const secret = randomBytes(32).toString("hex")
  const [port, adminPort] = [await freePort(), await freePort()]
  let gateway: ChildProcess | undefined
  try {
    gateway = spawn(process.execPath, ["--import", "tsx", "services/gateway/src/main.ts"], {
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        INTERNAL_SECRET: secret,
        OAUTH_SIGNING_KEYS: JSON.stringify([{ kid: "bench", pem: generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "sec1" }) }]),
        PORT: String(port),
        ADMIN_PORT: String(adminPort),
        HOST: "127.0.0.1",
        REFERENTIAL_URL: `http://127.0.0.1:${upstreamPort}`,
        RATE_LIMIT_PER_MINUTE: "100000000",
        LOG_LEVEL: "warn"
      }
    })
    await waitReady(`http://127.0.0.1:${adminPort}/readyz`)
    const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "bench", role: "operator", scope: "admin" })
    const patRequest = JSON.stringify({ tenantId: "0f0e0d0c-0b0a-4908-8706-050403020100", userSub: "bench", email: "bench@example.com", role: "viewer", scope: "read" })
    const created = await fetch(`http://127.0.0.1:${adminPort}/admin/pats`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [AssertionHeader]: signAssertion(secret, operator, { audience: "gateway", method: "POST", target: "/admin/pats", body: patRequest })
      },
      body: patRequest
    }).then((r) => r.json() as Promise<{ token: string }>)

    for (const concurrency of [1, 32]) {
      const direct = await runLoad({ url: `http://127.0.0.1:${upstreamPort}/api/v1/referentiel/applications`, concurrency, warmupMs: 1_000, durationMs: 5_000 })
      const [cpuBefore, servedBefore] = [cpuSeconds(gateway.pid!), served]
      const proxied = await runLoad({
        url: `http://127.0.0.1:${port}/api/v1/referentiel/applications`,
        headers: { authorization: `Bearer ${created.token}` },
        concurrency,
        warmupMs: 2_000,
        durationMs: 5_000
      })
      log(`concurrency ${concurrency}: upstream direct ${direct.requestsPerSecond.toFixed(0)} req/s (p50 ${direct.p50Ms.toFixed(2)} ms, p99 ${direct.p99Ms.toFixed(2)} ms, errors ${direct.errors})`)
      // Warm-up included: CPU over every request the gateway forwarded in that run.
      const cpuPerRequestMs = ((cpuSeconds(gateway.pid!) - cpuBefore) * 1000) / (served - servedBefore)
      log(`concurrency ${concurrency}: through gateway ${proxied.requestsPerSecond.toFixed(0)} req/s (p50 ${proxied.p50Ms.toFixed(2)} ms, p99 ${proxied.p99Ms.toFixed(2)} ms, errors ${proxied.errors}), gateway CPU ${cpuPerRequestMs.toFixed(3)} ms per request`)
    }
  } finally {
    gateway?.kill("SIGTERM")
    await new Promise((resolve) => (gateway === undefined || gateway.exitCode !== null ? resolve(undefined) : gateway.once("exit", resolve)))
    upstream.close()
    await database.drop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
