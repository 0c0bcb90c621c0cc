import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { imageSizeMb, nodeVersionOfDockerfile } from "./baseImage.js"
import { outcome, sh } from "./shell.js"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))

export const ImageName = "localhost/architecture-portfolio:rehearsal"

/**
 * deploy/Dockerfile built by buildah, unchanged, as the release workflow builds it with Docker:
 * `--format docker` because the OCI format has no HEALTHCHECK. Behind a TLS-inspecting proxy (this
 * machine's egress), the proxy's authorities reach `npm ci` as the Dockerfile's `extraca` secret.
 */
export const buildImage = async (options: { readonly tag?: string }): Promise<{ readonly seconds: number; readonly sizeMb: number }> => {
  const started = Date.now()
  const tag = options.tag ?? ImageName
  const revision = (await sh("git", ["rev-parse", "HEAD"], { cwd: repoRoot })).trim()
  const version = (JSON.parse(readFileSync(`${repoRoot}libs/client-typescript/package.json`, "utf8")) as { version: string }).version
  const extraCa = process.env["NODE_EXTRA_CA_CERTS"]
  await sh(
    "buildah",
    [
      "bud",
      "--isolation", "chroot",
      "--format", "docker",
      "--pull-never",
      "--layers",
      ...(extraCa !== undefined && existsSync(extraCa) ? ["--secret", `id=extraca,src=${extraCa}`] : []),
      "--build-arg", `VERSION=${version}`,
      "--build-arg", `REVISION=${revision}`,
      "-f", "deploy/Dockerfile",
      "-t", tag,
      "."
    ],
    { cwd: repoRoot, timeoutMs: 15 * 60_000 }
  )
  return { seconds: (Date.now() - started) / 1000, sizeMb: await imageSizeMb(tag) }
}

/** Runs one command in a throw-away container of the image, as the chart's pods run: read-only, unprivileged. */
const inImage = (image: string, command: ReadonlyArray<string>) =>
  sh("podman", ["run", "--rm", "--pull=never", "--no-healthcheck", "--read-only", "--read-only-tmpfs=false", "--cap-drop=ALL", "--network=none", image, ...command], {
    timeoutMs: 60_000
  })

export interface ImageCheck {
  readonly what: string
  readonly seen: string
}

/** What a platform team checks of an image before running it; any difference throws. */
export const checkImage = async (image: string = ImageName): Promise<ReadonlyArray<ImageCheck>> => {
  const checks: Array<ImageCheck> = []
  const expect = (what: string, seen: string, ok: boolean) => {
    if (!ok) throw new Error(`image check failed: ${what}; seen: ${seen}`)
    checks.push({ what, seen })
  }
  const nodeVersion = nodeVersionOfDockerfile()
  const node = (await inImage(image, ["node", "--version"])).trim()
  expect(`Node ${nodeVersion}`, node, node === `v${nodeVersion}`)
  const ids = (await inImage(image, ["sh", "-c", "id -u; id -g"])).trim().split(/\s+/)
  expect("runs as UID 1000, GID 1000", ids.join(":"), ids.join(":") === "1000:1000")
  const modules = (await inImage(image, ["sh", "-c", "find /app -name node_modules; ls /app"])).trim().split("\n")
  expect("no node_modules under /app", modules.join(" "), !modules.includes("node_modules") && !modules.some((line) => line.includes("/node_modules")))
  const version = (await inImage(image, ["portfolio", "--version"])).trim()
  expect("portfolio --version, on a read-only root file system", version, /\d+\.\d+\.\d+/.test(version))
  // As root, so that only the read-only mount can refuse the write.
  const written = await outcome("podman", ["run", "--rm", "--pull=never", "--no-healthcheck", "--read-only", "--read-only-tmpfs=false", "--network=none", "--user", "0", image, "sh", "-c", "touch /app/x"])
  expect("a read-only root file system refuses writes, even root's", written.stderr.trim(), written.code !== 0 && /read-only/i.test(written.stderr))
  const inspect = JSON.parse(await sh("podman", ["image", "inspect", image]))[0] as { Labels: Record<string, string> }
  const labels = inspect.Labels ?? {}
  const wanted = ["title", "description", "version", "revision", "base.name"].map((name) => `org.opencontainers.image.${name}`)
  expect("OCI labels", wanted.map((name) => `${name.split(".").pop()}=${labels[name]}`).join(" "), wanted.every((name) => (labels[name] ?? "") !== ""))
  const health = await healthCheckOf(image).catch((error: Error) => error)
  expect("health check", health instanceof Error ? health.message : health.command.join(" "), !(health instanceof Error) && health.command.includes("/app/healthcheck.mjs"))
  const size = await imageSizeMb(image)
  checks.push({ what: "size", seen: `${size} MB` })
  return checks
}

export interface HealthCheck {
  readonly command: ReadonlyArray<string>
  readonly intervalMs: number
  readonly timeoutMs: number
  readonly retries: number
}

/** The image's HEALTHCHECK as the image carries it (podman reports its durations in nanoseconds). */
export const healthCheckOf = async (image: string): Promise<HealthCheck> => {
  const inspect = JSON.parse(await sh("podman", ["image", "inspect", image]))[0] as {
    Healthcheck?: { Test: ReadonlyArray<string>; Interval?: number; Timeout?: number; Retries?: number }
  }
  const health = inspect.Healthcheck
  if (health === undefined || health.Test[0] !== "CMD") throw new Error(`${image} has no exec-form HEALTHCHECK: ${JSON.stringify(health)}`)
  // Docker's defaults where the Dockerfile sets none: 30 s, 30 s, 3.
  return {
    command: health.Test.slice(1),
    intervalMs: (health.Interval ?? 30e9) / 1e6,
    timeoutMs: (health.Timeout ?? 30e9) / 1e6,
    retries: health.Retries ?? 3
  }
}
