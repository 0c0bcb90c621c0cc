import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url))

/** Resident memory of a running process, in MB (Linux). */
export const rssMb = (pid: number): number => {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`)
  return Number(kb) / 1024
}

/** The arguments a process was started with. */
export const commandLine = (pid: number): ReadonlyArray<string> =>
  readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((arg) => arg !== "")

/** The environment a process was started with. */
export const environment = (pid: number): ReadonlyMap<string, string> =>
  new Map(
    readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter((entry) => entry.includes("=")).map((entry) => {
      const equals = entry.indexOf("=")
      return [entry.slice(0, equals), entry.slice(equals + 1)] as const
    })
  )

/** The files a process has mapped (its libraries among them). */
export const mappedFiles = (pid: number): ReadonlySet<string> =>
  new Set(readFileSync(`/proc/${pid}/maps`, "utf8").split("\n").map((line) => line.split(/\s+/)[5] ?? "").filter((path) => path.startsWith("/")))

export interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

/** Runs a command to its end in the repository, timing it from spawn to exit. */
export const run = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Finished> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }))
  })

/** The JSON a `--json` command printed, or an error with what it printed. */
export const jsonOf = (result: Finished): any => {
  if (result.code !== 0) throw new Error(`exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
  return JSON.parse(result.stdout.trim())
}
