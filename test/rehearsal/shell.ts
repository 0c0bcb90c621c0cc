import { spawn } from "node:child_process"

/** What a command printed and how it ended. */
export interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface RunOptions {
  readonly input?: string | Buffer
  readonly env?: NodeJS.ProcessEnv
  readonly cwd?: string
  /** Kills the command after this long; the rehearsal never waits on a hung tool. */
  readonly timeoutMs?: number
}

/** Runs a command to its end without a shell, whatever its exit code. */
export const outcome = (command: string, args: ReadonlyArray<string>, options: RunOptions = {}): Promise<Outcome> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout!.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr!.on("data", (chunk: Buffer) => err.push(chunk))
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), options.timeoutMs)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") })
    })
    if (options.input !== undefined) child.stdin!.end(options.input)
  })

export class CommandFailed extends Error {
  constructor(
    readonly command: string,
    readonly result: Outcome
  ) {
    super(`${command} exited with ${result.code}: ${(result.stderr || result.stdout).trim().split("\n").slice(-15).join("\n")}`)
  }
}

/** Runs a command and answers its standard output; a non-zero exit throws with the end of what it printed. */
export const sh = async (command: string, args: ReadonlyArray<string>, options: RunOptions = {}): Promise<string> => {
  const result = await outcome(command, args, options)
  if (result.code !== 0) throw new CommandFailed(`${command} ${args.slice(0, 3).join(" ")}`, result)
  return result.stdout
}

export const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
