import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { cpuMeter } from "../support/cpuTime.js"
import { startCeiling } from "./ceilings.js"
import { runLoad } from "./load.js"

/**
 * What forwarding costs the gateway on its two possible engines, for docs/architecture.md ("Through
 * the gateway"): the adapter's node:http + undici dispatch handler (forward-undici.ts) against an
 * Effect HTTP server and Effect's HttpClient over undici (forward-effect.ts), each in its own
 * process before the same bare node:http upstream (bare-server.ts), under wrk. Prints requests a
 * second and the forwarder's CPU per request, and the ratio of the two. Not part of `npm test`.
 *
 *   npx tsx test/bench/forwarders.ts [rounds]
 */
const rounds = Number(process.argv[2] ?? "2")
const log = (line: string) => process.stdout.write(`${line}\n`)


const stop = (processes: ReadonlyArray<ChildProcess>) => {
  for (const child of processes) {
    child.removeAllListeners("exit")
    child.kill("SIGTERM")
  }
}

const directory = mkdtempSync(join(tmpdir(), "portfolio-forwarders-"))
const children: Array<ChildProcess> = []
try {
  log(`forwarders: ${rounds} rounds; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`)
  const bodies = { "741 B": 741, "1 MiB": 1024 * 1024 }
  for (const [label, size] of Object.entries(bodies)) {
    const file = join(directory, `${size}.json`)
    writeFileSync(file, JSON.stringify({ text: "x".repeat(size - 12) }))
    const upstream = await startCeiling("bare-server.ts", [file])
    children.push(upstream.child)
    const forwarders = {
      "node:http + undici dispatch": await startCeiling("forward-undici.ts", [upstream.url]),
      "Effect server + HttpClient": await startCeiling("forward-effect.ts", [upstream.url]),
      "the same, without spans": await startCeiling("forward-effect.ts", [upstream.url, "untraced"])
    }
    children.push(...Object.values(forwarders).map((f) => f.child))
    const concurrency = size > 100_000 ? 8 : 32
    log(`\n${label} answers, ${concurrency} at a time`)
    const perRequest: Record<string, Array<number>> = {}
    for (let round = 1; round <= rounds; round++) {
      for (const [name, forwarder] of Object.entries(forwarders)) {
        const meter = cpuMeter({ forwarder: () => [forwarder.child.pid!] })
        meter.start()
        const result = await runLoad({ url: `${forwarder.url}/api/v1/referentiel/applications/APP-1`, concurrency, warmupMs: 2_000, durationMs: 6_000 })
        const us = (meter.stop()["forwarder"]! * 1e6) / result.requests
        ;(perRequest[name] ??= []).push(us)
        log(`  round ${round} ${name.padEnd(28)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, forwarder CPU ${us.toFixed(0)} us/request${result.errors > 0 ? `, ${result.errors} errors` : ""}`)
      }
    }
    const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    const [undici, ...effect] = Object.values(perRequest).map(median)
    log(`  forwarder CPU per request, Effect / undici: ${effect.map((us) => `${(us / undici!).toFixed(2)} (${us.toFixed(0)} / ${undici!.toFixed(0)} us)`).join(", without spans ")}, medians`)
    stop(children.splice(0))
  }
} finally {
  stop(children)
  rmSync(directory, { recursive: true, force: true })
}
