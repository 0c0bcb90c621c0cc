import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url))

/**
 * The black-box suite drives what production runs: the bundles of `npm run build`, which `npm test`
 * makes first (README, "Run it"). `BLACKBOX_SOURCES=1` runs the services and the CLI from their
 * TypeScript sources through tsx instead, to try a change without building.
 */
export const fromSources = process.env["BLACKBOX_SOURCES"] === "1"
const cliEntry = fromSources ? "libs/cli/bin/portfolio.mjs" : "dist/cli/portfolio.mjs"

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `portfolio <args>` as the operator would (the image's compiled CLI), in a child process with the system's env. */
export const runCli = (
  args: ReadonlyArray<string>,
  options: { readonly env: Record<string, string>; readonly input?: string }
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliEntry, ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...options.env, LOG_LEVEL: "Warn" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

/** The JSON a `--json` command printed; its last JSON line when something printed before it. */
export const parseJsonOutput = (stdout: string): any => {
  const trimmed = stdout.trim()
  try {
    return JSON.parse(trimmed)
  } catch {
    const lines = trimmed.split("\n").filter((line) => line.trim().startsWith("{") || line.trim().startsWith("["))
    const last = lines.at(-1)
    if (last === undefined) throw new Error(`no JSON in CLI output: ${stdout}`)
    return JSON.parse(last)
  }
}

/** Runs a `--json` command that must succeed and returns what it printed. */
export const cliJson = async (args: ReadonlyArray<string>, options: { readonly env: Record<string, string>; readonly input?: string }) => {
  const result = await runCli([...args, "--json"], options)
  if (result.code !== 0) {
    throw new Error(`portfolio ${args.join(" ")} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
  }
  return parseJsonOutput(result.stdout)
}
