import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url))

/** Runs provisioning's main.ts with exactly this environment; answers its exit code and output. */
const start = (env: Record<string, string>) =>
  new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "services/provisioning/src/main.ts"], {
      cwd: repoRoot,
      env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

describe("provisioning start-up", () => {
  it("refuses to start without SMTP_URL or MAIL_TRANSPORT=local, naming SMTP_URL before trying any connection", async () => {
    const { code, output } = await start({
      // Unreachable on purpose: the mail settings must be refused before the database is tried.
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      INTERNAL_SECRET: "0123456789abcdef0123456789abcdef0123",
      PORT: "18999",
      ADMIN_PORT: "18998"
    })
    expect(code).toBe(1)
    expect(output).toContain("Missing data at SMTP_URL")
    expect(output).toContain("MAIL_TRANSPORT=local")
  }, 90_000)
})
