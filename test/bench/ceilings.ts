import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { repoRoot } from "../support/cli.js"

/** A server of test/bench in its own process (a ceiling, a forwarder); it prints its port once listening. */
export const startCeiling = (script: string, args: ReadonlyArray<string>) =>
  new Promise<{ url: string; child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", `test/bench/${script}`, ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
    child.on("error", reject)
    child.on("exit", (code) => reject(new Error(`${script} exited ${code}`)))
    createInterface({ input: child.stdout! }).once("line", (port) => resolve({ url: `http://127.0.0.1:${port}`, child }))
  })
