import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The receivers the README gives to customers, run as written: the code between
 * `<!-- receiver:<language> -->` and `<!-- /receiver:<language> -->`, so that the documentation
 * cannot drift from the signatures the dispatcher sends.
 */

const readme = fileURLToPath(new URL("../../../../README.md", import.meta.url))

export interface ReceiverSource {
  readonly language: string
  readonly command: string
  readonly fileName: string
  readonly code: string
}

const codeBlock = (text: string, language: string) => {
  const found = new RegExp(`<!-- receiver:${language} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\`\\s*<!-- /receiver:${language} -->`).exec(text)
  if (found === null) throw new Error(`README.md has no code block between <!-- receiver:${language} --> and <!-- /receiver:${language} -->`)
  return found[1]!
}

export const readmeReceivers = (): ReadonlyArray<ReceiverSource> => {
  const text = readFileSync(readme, "utf8")
  return [
    { language: "node", command: process.execPath, fileName: "receiver.mjs", code: codeBlock(text, "node") },
    { language: "python", command: "python3", fileName: "receiver.py", code: codeBlock(text, "python") }
  ]
}

export interface Receiver {
  /** The status it answered. */
  readonly post: (headers: Readonly<Record<string, string>>, body: string) => Promise<number>
  /** What it printed so far, once a line matching `until` is among it (5 s at most). */
  readonly linesUntil: (until: (line: string) => boolean) => Promise<ReadonlyArray<string>>
  readonly stop: () => Promise<void>
}

/** Runs the receiver with `WEBHOOK_SECRET=secret` on a free port (PORT=0), once it says where it listens. */
export const startReceiver = (source: ReceiverSource, secret: string): Promise<Receiver> => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-receiver-"))
  const file = join(dir, source.fileName)
  writeFileSync(file, source.code)
  const child = spawn(source.command, [file], { env: { ...process.env, WEBHOOK_SECRET: secret, PORT: "0" }, stdio: ["ignore", "pipe", "pipe"] })
  const lines: Array<string> = []
  let stderr = ""
  let partial = ""
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  }

  const linesUntil = async (until: (line: string) => boolean) => {
    const deadline = Date.now() + 5_000
    while (!lines.some(until)) {
      if (Date.now() > deadline) throw new Error(`${source.language} receiver printed no such line; it printed ${JSON.stringify(lines)}, stderr: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    return [...lines]
  }

  const receiverOn = (port: number): Receiver => ({
    post: async (headers, body) => {
      const response = await fetch(`http://127.0.0.1:${port}/hooks/portfolio`, { method: "POST", headers, body })
      await response.arrayBuffer()
      return response.status
    },
    linesUntil,
    stop
  })

  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => {
      rmSync(dir, { recursive: true, force: true })
      reject(new Error(`${source.language} receiver exited (${code}) before listening: ${stderr}`))
    }
    child.once("exit", exited)
    child.once("error", reject)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      const split = (partial + chunk).split("\n")
      partial = split.pop()!
      for (const line of split) {
        lines.push(line)
        const listening = /^listening on (\d+)$/.exec(line)
        if (listening !== null) {
          child.off("exit", exited)
          resolve(receiverOn(Number(listening[1])))
        }
      }
    })
  })
}
