import { type ChildProcess, spawn } from "node:child_process"
import net from "node:net"

/**
 * The README's start command, as a person runs it: `npm start` in a terminal (its own process
 * group), its output gathered, then Ctrl-C (a SIGINT to the whole group).
 */

export interface Started {
  readonly child: ChildProcess
  readonly output: () => string
  /** When the launcher and everything holding its output are gone, and how npm ended. */
  readonly closed: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/**
 * The launcher's readiness bound in these tests (START_TIMEOUT, seconds): its default of 120 s was
 * not enough once, for a first start from the sources while three other test files ran their
 * systems on the CI's two cores (load 15). What is tested is what the launcher does, not how fast.
 */
const StartTimeoutSeconds = 200

/** Within StartWithinMs: the launcher's own readiness bound (START_TIMEOUT), the first tenant seeded, and some. */
export const StartWithinMs = (StartTimeoutSeconds + 60) * 1000

/** `args` go to the launcher (`npm start -- <args>`), such as `--compiled`. */
export const startNpm = (env: Record<string, string>, args: ReadonlyArray<string> = []): Started => {
  let output = ""
  const child = spawn("npm", ["start", ...(args.length === 0 ? [] : ["--", ...args])], {
    cwd: process.cwd(),
    env: { ...process.env, START_TIMEOUT: String(StartTimeoutSeconds), ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })))
  return { child, output: () => output, closed }
}

export const waitFor = async (started: Started, pattern: RegExp, what: string): Promise<RegExpMatchArray> => {
  for (let i = 0; i < StartWithinMs / 100; i++) {
    const match = started.output().match(pattern)
    if (match !== null) return match
    if (started.child.exitCode !== null || started.child.signalCode !== null) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`npm start never printed ${what}; its output:\n${started.output()}`)
}

/**
 * npm itself dies of the SIGINT, as in a terminal; what must hold is that the launcher, which
 * holds the output pipes until it has stopped its services, says so and lets go.
 */
export const ctrlC = async (started: Started) => {
  process.kill(-started.child.pid!, "SIGINT")
  const { code, signal } = await started.closed
  return code === 0 || signal === "SIGINT"
}

export const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => (socket.destroy(), resolve(true)))
    socket.once("error", () => resolve(false))
  })

