import { spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * HTTP GET load with wrk (Debian's package, one thread), not a Node loop: a Node generator shares
 * the two cores with the servers it measures and starved them (bare node:http answered about
 * 14,200 req/s under it and 55,700 to 63,100 under wrk), which flattered every ratio to a ceiling.
 */
if (spawnSync("wrk", ["-v"]).error !== undefined) {
  throw new Error("wrk is missing: the benches generate their HTTP load with it (apt-get install wrk)")
}

const script = fileURLToPath(new URL("load.lua", import.meta.url))

export interface LoadOptions {
  readonly url: string
  readonly headers?: Record<string, string>
  /**
   * A header holding a compact HS256 JWS that the server accepts once (the internal assertion):
   * wrk sends `token` signed anew with `secret` for every request, its `iat`, `exp` and `jti`
   * renewed and its other claims kept.
   */
  readonly oneUseToken?: { readonly header: string; readonly secret: string; readonly token: string }
  /** Number of connections, each with one request in flight at a time. */
  readonly concurrency: number
  /** Whole seconds: wrk's durations have no finer unit. */
  readonly warmupMs: number
  readonly durationMs: number
}

export interface LoadResult {
  /** Requests answered with a status below 400 in the measured run. */
  readonly requests: number
  readonly errors: number
  readonly requestsPerSecond: number
  /** As wrk reports them: corrected for coordinated omission (wrk back-fills a late answer's wait). */
  readonly p50Ms: number
  readonly p99Ms: number
  /** What wrk read per answer, its head included. */
  readonly bytesPerResponse: number
  /** CPU seconds wrk itself spent, warm-up included. */
  readonly loadCpuSeconds: number
}

interface WrkSummary {
  readonly durationUs: number
  readonly requests: number
  readonly bytes: number
  readonly connect: number
  readonly read: number
  readonly write: number
  readonly status: number
  readonly timeout: number
  readonly p50Us: number
  readonly p99Us: number
  readonly cpuUs: number
}

const wholeSeconds = (ms: number, name: string) => {
  if (!Number.isInteger(ms / 1000) || ms < 0) throw new Error(`${name} must be whole seconds for wrk, not ${ms} ms`)
  return ms / 1000
}

/** The token file load.lua reads; it holds the secret, hence a private directory. */
const tokenFile = (directory: string, token: NonNullable<LoadOptions["oneUseToken"]>) => {
  const [protectedHeader, payload] = token.token.split(".") as [string, string]
  const { iat, exp, ...signed } = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>
  const kept = Object.entries(signed).filter(([name]) => name !== "jti")
  const claims = JSON.stringify(Object.fromEntries(kept)).slice(0, -1) + (kept.length > 0 ? "," : "")
  const lifetime = Number(exp) - Number(iat)
  if (!Number.isInteger(lifetime) || lifetime <= 0) throw new Error("the one-use token has no positive lifetime (exp - iat)")
  // A fresh jti prefix per file: the server remembers used ids across wrk runs.
  const file = join(directory, `token-${randomBytes(6).toString("hex")}`)
  writeFileSync(file, [token.header, token.secret, protectedHeader, claims, lifetime, randomBytes(15).toString("base64url")].join("\n") + "\n", { mode: 0o600 })
  return file
}

const wrk = (options: LoadOptions, seconds: number, directory: string) =>
  new Promise<WrkSummary>((resolve, reject) => {
    const args = ["-t1", `-c${options.concurrency}`, `-d${seconds}s`, "-s", script]
    for (const [name, value] of Object.entries(options.headers ?? {})) args.push("-H", `${name}: ${value}`)
    args.push(options.url)
    if (options.oneUseToken !== undefined) args.push("--", tokenFile(directory, options.oneUseToken))
    const child = spawn("wrk", args, { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    // wrk stops itself within a tenth of a second of `seconds`: long past that, it is stuck.
    const deadline = setTimeout(() => child.kill("SIGKILL"), (seconds + 15) * 1000)
    child.on("error", (error) => {
      clearTimeout(deadline)
      reject(error)
    })
    child.on("close", (code, signal) => {
      clearTimeout(deadline)
      const summary = stdout.trimEnd().split("\n").at(-1) ?? ""
      if (code !== 0 || !summary.startsWith("{")) {
        reject(new Error(`wrk ${args.join(" ")} ${signal === "SIGKILL" ? `overran ${seconds} s and was killed` : `exited ${code ?? signal}`}: ${stderr || stdout}`))
      } else resolve(JSON.parse(summary) as WrkSummary)
    })
  })

/**
 * A bounded closed loop: `concurrency` keep-alive connections each send a request, wait for the
 * whole answer and send the next, first for the warm-up in a run of its own, then for the duration
 * measured. Loopback only.
 */
export const runLoad = async (options: LoadOptions): Promise<LoadResult> => {
  const target = new URL(options.url)
  if (target.hostname !== "127.0.0.1") throw new Error(`the load generator only sends to 127.0.0.1, not ${target.hostname}`)
  const [warmupSeconds, seconds] = [wholeSeconds(options.warmupMs, "warmupMs"), wholeSeconds(options.durationMs, "durationMs")]
  const directory = mkdtempSync(join(tmpdir(), "portfolio-load-"))
  try {
    const warmup = warmupSeconds > 0 ? await wrk(options, warmupSeconds, directory) : undefined
    const run = await wrk(options, seconds, directory)
    const requests = run.requests - run.status
    return {
      requests,
      errors: run.connect + run.read + run.write + run.status + run.timeout,
      requestsPerSecond: requests / (run.durationUs / 1e6),
      p50Ms: run.p50Us / 1000,
      p99Ms: run.p99Us / 1000,
      bytesPerResponse: run.requests === 0 ? 0 : Math.round(run.bytes / run.requests),
      loadCpuSeconds: ((warmup?.cpuUs ?? 0) + run.cpuUs) / 1e6
    }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}
