/**
 * `npm run bench`, start-up part: how long an operator waits for the compiled CLI and for the
 * compiled services, beside the ceiling measured in the same run (a bare `node -e 0`, what any Node
 * program costs to start here). Targets (README, "Performance"): `portfolio --version` under 0.5 s,
 * a real CLI call (one admin API round trip) under 1 s, each service ready under 3 s with the five
 * started at once. Prints PASS or FAIL per target and exits non-zero on a failure. Needs
 * `npm run build` (the bench script runs it first).
 */
import { createDatabase } from "@portfolio/platform/testing"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { cpus, loadavg } from "node:os"
import { startSystem } from "../../deploy/local/system.js"
import { repoRoot } from "../support/cli.js"

const runs = 11
const log = (line: string) => process.stdout.write(`${line}\n`)

const timed = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`node ${args.join(" ")} exited ${code}: ${stderr}`))))
  })

/** Median and maximum of `runs` sequential runs, after one unmeasured run that warms the file cache. */
const measure = async (args: ReadonlyArray<string>, env?: Record<string, string>) => {
  await timed(args, env)
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) times.push(await timed(args, env))
  times.sort((a, b) => a - b)
  return { median: times[Math.floor(runs / 2)]!, max: times[runs - 1]! }
}

const main = async () => {
  log(`start-up of the compiled CLI and services (load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores), median of ${runs} runs`)
  const bare = await measure(["-e", "0"])
  const version = await measure(["dist/cli/portfolio.mjs", "--version"])

  const secret = randomBytes(32).toString("hex")
  const database = await createDatabase("bench")
  try {
    const system = await startSystem({ databaseUrl: database.url, compiled: true, quiet: true, env: { INTERNAL_SECRET: secret, LOG_LEVEL: "Warn" } })
    try {
      const env = { ...system.env, INTERNAL_SECRET: secret, LOG_LEVEL: "Warn" }
      const created = await timed(["dist/cli/portfolio.mjs", "tenant", "create", "startup", "--admin-email", "admin@startup.example", "--json"], env)
      const call = await measure(["dist/cli/portfolio.mjs", "invitations", "list", "--tenant", "startup", "--json"], env)
      log(`  bare node -e 0                      ${bare.median.toFixed(0).padStart(6)} ms median ${bare.max.toFixed(0).padStart(6)} ms max`)
      log(`  portfolio --version                 ${version.median.toFixed(0).padStart(6)} ms median ${version.max.toFixed(0).padStart(6)} ms max`)
      log(`  portfolio invitations list --json   ${call.median.toFixed(0).padStart(6)} ms median ${call.max.toFixed(0).padStart(6)} ms max`)
      log(`  portfolio tenant create (once)      ${created.toFixed(0).padStart(6)} ms`)
      log(`  services started at once, ready in: ${system.processes.map((p) => `${p.service} ${p.readyMs} ms`).join(", ")}`)
      log(`ratios to bare node: --version ${(version.median / bare.median).toFixed(1)} x, a real call ${(call.median / bare.median).toFixed(1)} x`)
      const targets = [
        { name: "portfolio --version under 0.5 s (median)", measured: `${version.median.toFixed(0)} ms`, pass: version.median < 500 },
        { name: "a real CLI call under 1 s (median)", measured: `${call.median.toFixed(0)} ms`, pass: call.median < 1_000 },
        ...system.processes.map((p) => ({ name: `${p.service} ready under 3 s, the five started at once`, measured: `${p.readyMs} ms`, pass: p.readyMs < 3_000 }))
      ]
      log("")
      for (const target of targets) log(`${target.pass ? "PASS" : "FAIL"}  ${target.name}: ${target.measured}`)
      if (targets.some((target) => !target.pass)) process.exitCode = 1
    } finally {
      await system.stop()
    }
  } finally {
    await database.drop()
  }
}

await main()
