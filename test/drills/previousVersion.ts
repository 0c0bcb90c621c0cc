import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { repoRoot } from "./topology.js"

/**
 * The version a rolling upgrade starts from: the last commit before the cluster work (the NATS
 * client move, NATS_REPLICAS, retention, the drills), which production ran before this one. Move
 * it to the last release when there is one.
 */
export const PreviousVersion = "aca85c1"

const run = (command: string, args: ReadonlyArray<string>, cwd: string) => {
  const done = spawnSync(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (done.status !== 0) throw new Error(`${command} ${args.join(" ")} in ${cwd} exited ${done.status}:\n${(done.stderr || done.stdout).slice(-2_000)}`)
}

/**
 * That version's tree, installed from its own lock file and built, as its image would hold it:
 * made once per machine under /var/tmp (about a minute), then reused.
 */
export const preparePreviousVersion = (say: (line: string) => void): string => {
  const commit = execFileSync("git", ["rev-parse", `${PreviousVersion}^{commit}`], { cwd: repoRoot, encoding: "utf8" }).trim()
  const root = `/var/tmp/portfolio-previous-${commit.slice(0, 12)}`
  if (!existsSync(`${root}/package.json`)) {
    say(`previous version ${commit.slice(0, 12)}: its tree (git archive)`)
    mkdirSync(root, { recursive: true })
    run("sh", ["-c", `git -C '${repoRoot}' archive ${commit} | tar -x -C '${root}'`], repoRoot)
  }
  if (!existsSync(`${root}/node_modules/.package-lock.json`)) {
    say("previous version: npm ci")
    run("npm", ["ci", "--no-audit", "--no-fund"], root)
  }
  if (!existsSync(`${root}/dist/gateway/main.mjs`)) {
    say("previous version: npm run build")
    run("npm", ["run", "build"], root)
  }
  return root
}
