import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { checkBundle } from "./compiledBuild.js"
import { collectLines } from "./logLines.js"

export interface ServiceProcess {
  readonly name: string
  readonly pid: number
  /** Resolves once every URL's `/readyz` answers 200; rejects with the service's last log lines otherwise. */
  readonly ready: (urls: ReadonlyArray<string>, timeoutMs: number) => Promise<void>
  /** Settles with the exit code (or the signal) when the process exits. */
  readonly exited: Promise<number | string>
  /** SIGTERM, then SIGKILL when it has not exited after `graceMs`. */
  readonly stop: (graceMs: number) => Promise<void>
}

/** Whether a process of this pid runs (signal 0 only asks). */
export const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

const waitExit = (child: ChildProcess, ms: number): Promise<boolean> =>
  exited(child)
    ? Promise.resolve(true)
    : new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms)
      child.once("exit", () => {
        clearTimeout(timer)
        resolve(true)
      })
    })

const answersReady = async (url: string) => {
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) })
    await response.body?.cancel()
    return response.status === 200
  } catch {
    return false
  }
}

/**
 * What node runs: the sources through tsx (development), or the bundle `npm run build` made, with
 * plain node and no loader, as production does; a missing or stale bundle is refused.
 */
const entryArgs = (name: string, cwd: string, compiled: boolean, nodeArgs: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (!compiled) return [...nodeArgs, "--import", "tsx", `services/${name}/src/main.ts`]
  const bundle = checkBundle(cwd, name)
  if ("error" in bundle) throw new Error(`cannot run the compiled ${name}: ${bundle.error}`)
  // The caller's options after ours: node takes the last of a repeated one.
  return [...CompiledNodeOptions, ...nodeArgs, bundle.path]
}

/**
 * How production runs a compiled service (docs/architecture.md#memory): stack traces in TypeScript
 * lines; a young generation of 4 MB per semi-space instead of V8's 16 MB here; and an old
 * generation of at most 128 MB, against a live heap of ~50 MB measured after the benchmark (the
 * read cache's bodies live outside it). V8 sizes its heap from the machine, not the container,
 * and collects lazily below that: without the cap the services ended the benchmark at 186-370 MB
 * resident, mostly garbage not yet collected. V8's allocation-site pretenuring is turned off by
 * the file each bundle is started by (`launcher`, deploy/build/build.ts), since node refuses that
 * flag in NODE_OPTIONS, which is how the image passes these.
 */
export const CompiledNodeOptions: ReadonlyArray<string> = ["--enable-source-maps", "--max-semi-space-size=4", "--max-old-space-size=128"]

/** jemalloc's settings, freed pages given back after `dirtyDecayMs`: the one thing services set apart. */
const jemallocConf = (dirtyDecayMs: number) => `background_thread:true,narenas:2,dirty_decay_ms:${dirtyDecayMs},muzzy_decay_ms:0`

/**
 * And its environment. The allocator is jemalloc (Debian's libjemalloc2, preloaded: the image
 * links it at `ImageJemalloc`), whose background thread gives the pages of freed memory back to
 * the system within a second: glibc's malloc kept them in its arenas, and bench:scale's
 * referential, 70 s idle after its largest reads, held 194 MB resident with glibc against 147 MB
 * with jemalloc (its V8 heap 35 MB in both), the gateway 136 against 123. Two arenas, as glibc had
 * (`narenas`: one per thread that allocates otherwise). Where jemalloc is missing (a machine
 * without libjemalloc2), glibc's settings hold: two arenas (135 against 149 MB resident for the
 * referential at the end of the benchmark) and allocations of 128 KiB or more mapped apart,
 * given back when freed (glibc's threshold otherwise rises to the largest block freed, up to
 * 32 MiB, after which the large answers' buffers come from arenas that keep them). The caller's
 * value wins.
 */
export const CompiledEnvironment: Readonly<Record<string, string>> = {
  MALLOC_CONF: jemallocConf(1000),
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "131072"
}

/**
 * What a service's environment sets in place of `CompiledEnvironment`'s (the chart sets the same in
 * its Deployment). The gateway's jemalloc gives freed pages back after 100 ms instead of a second:
 * it builds nothing, but every socket read of a proxied answer takes a 64 KiB buffer, 27 to 35 MB a
 * second while a 13 MB answer passes, and with a second's decay those pages stayed resident after
 * being freed: its growth while bench:scale read posi, the list and the tree at 50x was +8.2 to
 * +12.7 MB in four runs, +5.5 to +9.4 with 100 ms for the gateway (alternated with them). Not for
 * the others: with 100 ms for every service, posi after a write at 50x took 169 to 232 ms at p50
 * against 133 to 177 (four runs each, alternated), the referential mapping its large buffers again.
 */
export const CompiledServiceEnvironment: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  gateway: { MALLOC_CONF: jemallocConf(100) }
}

/** Where the image puts jemalloc, whatever its architecture (deploy/Dockerfile). */
export const ImageJemalloc = "/usr/local/lib/libjemalloc.so.2"

const JemallocPaths = [ImageJemalloc, `/usr/lib/${process.arch === "arm64" ? "aarch64" : "x86_64"}-linux-gnu/libjemalloc.so.2`]

/** `LD_PRELOAD` of jemalloc where this machine has it (`.ci/run` installs it), nothing otherwise. */
export const preloadedAllocator = (): Readonly<Record<string, string>> => {
  const found = JemallocPaths.find((path) => existsSync(path))
  return found === undefined ? {} : { LD_PRELOAD: found }
}

/**
 * Runs `services/<name>/src/main.ts` (or, `compiled`, `dist/<name>/main.mjs`) in a Node process of
 * its own, with exactly `env`.
 */
export const spawnService = (options: {
  readonly name: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly onLine: (line: string) => void
  /** More options of node itself (a benchmark's `--cpu-prof`), which NODE_OPTIONS may not carry. */
  readonly nodeArgs?: ReadonlyArray<string>
  /** Run the compiled bundle instead of the sources (throws when it is missing or stale). */
  readonly compiled?: boolean
}): ServiceProcess => {
  const args = entryArgs(options.name, options.cwd, options.compiled === true, options.nodeArgs ?? [])
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: options.compiled === true
      ? { ...CompiledEnvironment, ...CompiledServiceEnvironment[options.name], ...preloadedAllocator(), ...options.env }
      : options.env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  if (child.pid === undefined) throw new Error(`could not start ${options.name}`)
  const exitedPromise = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"))
  )
  const last = collectLines([child.stdout!, child.stderr!], options.onLine)
  const report = (what: string) => new Error(`${options.name} ${what}; its last log lines:\n${last.join("\n")}`)

  const ready = async (urls: ReadonlyArray<string>, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs
    const pending = new Set(urls)
    while (pending.size > 0) {
      if (exited(child)) throw report(`exited (code ${child.exitCode ?? child.signalCode}) before it was ready`)
      if (Date.now() > deadline) throw report(`was not ready within ${Math.round(timeoutMs / 1000)} s (waiting on ${[...pending].join(", ")})`)
      for (const url of [...pending]) if (await answersReady(url)) pending.delete(url)
      if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  const stop = async (graceMs: number) => {
    if (exited(child)) return
    child.kill("SIGTERM")
    if (await waitExit(child, graceMs)) return
    child.kill("SIGKILL")
    await waitExit(child, 5_000)
  }

  return { name: options.name, pid: child.pid, ready, exited: exitedPromise, stop }
}
