import { spawn } from "node:child_process"
import { repoRoot } from "./cli.js"

/** Debian's python3, which has python3-httpx and python3-pytest (the pyenv one on PATH has neither). */
export const python = process.env["PORTFOLIO_PYTHON"] ?? "/usr/bin/python3"

/** Runs pytest in libs/client-python with `args`; answers its exit code and its output, both streams. */
export const runPytest = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", ...args], {
      cwd: `${repoRoot}libs/client-python`,
      env: { ...env, PYTHONDONTWRITEBYTECODE: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, output }))
  })
