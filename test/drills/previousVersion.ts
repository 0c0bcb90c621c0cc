import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs"
import { repoRoot } from "./topology.js"

/**
 * The version a rolling upgrade starts from: the last commit before the cluster work (the NATS
 * client move, NATS_REPLICAS, retention, the drills), which production ran before this one. Move
 * it to the last release when there is one.
 */
export const PreviousVersion = "aca85c1"

/**
 * `command` in a process group of its own (npm's children with it), so that an abort or this
 * process's exit ends them all; asynchronous, so that signals and the drills' watchdog are heard meanwhile.
 */
const run = (command: string, args: ReadonlyArray<string>, cwd: string, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    signal.throwIfAborted()
    const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true })
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        // Gone already.
      }
    }
    process.on("exit", killGroup)
    signal.addEventListener("abort", killGroup, { once: true })
    let output = ""
    const keep = (chunk: Buffer) => void (output = (output + chunk.toString("utf8")).slice(-2_000))
    child.stdout!.on("data", keep)
    child.stderr!.on("data", keep)
    child.once("error", reject)
    child.once("close", (code, killedBy) => {
      process.removeListener("exit", killGroup)
      signal.removeEventListener("abort", killGroup)
      if (code === 0) resolve()
      else reject(new Error(`${command} ${args.join(" ")} in ${cwd} exited ${code ?? killedBy}:\n${output}`))
    })
  })

/**
 * That version's tree, installed from its own lock file and built, as its image would hold it:
 * made once per machine under /var/tmp (about a minute), then reused.
 */
export const preparePreviousVersion = async (say: (line: string) => void, signal: AbortSignal): Promise<string> => {
  const commit = execFileSync("git", ["rev-parse", `${PreviousVersion}^{commit}`], { cwd: repoRoot, encoding: "utf8" }).trim()
  const root = `/var/tmp/portfolio-previous-${commit.slice(0, 12)}`
  if (!existsSync(`${root}/package.json`)) {
    say(`previous version ${commit.slice(0, 12)}: its tree (git archive)`)
    // Whole or not at all: a tree cut short by an abort is not taken for one next time.
    const partial = `${root}.partial`
    rmSync(partial, { recursive: true, force: true })
    mkdirSync(partial, { recursive: true })
    await run("sh", ["-c", `git -C '${repoRoot}' archive ${commit} | tar -x -C '${partial}'`], repoRoot, signal)
    rmSync(root, { recursive: true, force: true })
    renameSync(partial, root)
  }
  if (!existsSync(`${root}/node_modules/.package-lock.json`)) {
    say("previous version: npm ci")
    await run("npm", ["ci", "--no-audit", "--no-fund"], root, signal)
  }
  if (!existsSync(`${root}/dist/gateway/main.mjs`)) {
    say("previous version: npm run build")
    await run("npm", ["run", "build"], root, signal)
  }
  return root
}
