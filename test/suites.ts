/**
 * `npm test` once built: vitest's run of every suite and, beside it, the TypeScript SDK's unit suite
 * on Node 24 then on Node 18 (`npm run test:sdk`, `npm run test:sdk-node18`). Vitest keeps the two
 * cores busy 1.3 on average (much of its time is black-box files waiting on processes and
 * windows), so the SDK's 37 s in turn after it fit in that slack. The SDK suites' output is held
 * and printed after vitest's, so that each report reads in one piece; every suite runs whatever
 * the others do, and the exit status is the first failure's.
 */
import { spawn } from "node:child_process"

const run = (script: string, output: "inherit" | "held") =>
  new Promise<{ readonly script: string; readonly code: number; readonly text: string }>((resolve) => {
    const child = spawn("npm", ["run", "--silent", script], { stdio: output === "inherit" ? "inherit" : ["ignore", "pipe", "pipe"] })
    const chunks: Array<Buffer> = []
    child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.on("close", (code, signal) => resolve({ script, code: code ?? (signal === null ? 1 : 128), text: Buffer.concat(chunks).toString("utf8") }))
  })

const sdk = (async () => {
  const node24 = await run("test:sdk", "held")
  const node18 = await run("test:sdk-node18", "held")
  return [node24, node18]
})()
const vitest = await run("test:vitest", "inherit")
const results = [vitest, ...await sdk]
for (const result of results.slice(1)) process.stdout.write(`\n==> npm run ${result.script}\n${result.text}`)
const failed = results.filter((result) => result.code !== 0)
for (const result of failed) console.error(`npm run ${result.script} exited ${result.code}`)
process.exit(failed[0]?.code ?? 0)
