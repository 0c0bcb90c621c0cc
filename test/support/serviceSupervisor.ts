import { spawnService, type ServiceProcess } from "../../deploy/local/serviceProcess.js"
import { fromSources, repoRoot } from "./cli.js"

/**
 * Service processes a fault test starts, kills with SIGKILL and starts again with the same
 * environment and ports, waiting each time until it is ready.
 */
export class ServiceSupervisor {
  readonly #running = new Map<string, { process: ServiceProcess; env: Record<string, string>; readyUrls: ReadonlyArray<string>; nodeArgs: ReadonlyArray<string> }>()
  readonly logs: Array<string> = []

  /**
   * `compiled`: the bundles `npm run build` made, as production runs them (and in a fifth of the
   * time tsx takes to start a service from its sources), unless `BLACKBOX_SOURCES=1` asks for the
   * sources, as for the rest of the system under test.
   */
  constructor(readonly options: { readonly compiled?: boolean } = {}) {}

  async start(name: string, env: Record<string, string>, readyUrls: ReadonlyArray<string>, nodeArgs: ReadonlyArray<string> = []) {
    const process = spawnService({
      name,
      cwd: repoRoot,
      env,
      nodeArgs,
      compiled: this.options.compiled ?? !fromSources,
      onLine: (line) => {
        this.logs.push(`${name} | ${line}`)
        if (this.logs.length > 3000) this.logs.splice(0, 500)
      }
    })
    this.#running.set(name, { process, env, readyUrls, nodeArgs })
    await process.ready(readyUrls, 90_000)
  }

  /** The running process of `name`, for a benchmark's CPU accounting. */
  pid(name: string): number {
    const running = this.#running.get(name)
    if (running === undefined) throw new Error(`${name} is not running`)
    return running.process.pid
  }

  /** kill -9, then the same service again; resolves once it is ready. */
  async crash(name: string) {
    const running = this.#running.get(name)
    if (running === undefined) throw new Error(`${name} is not running`)
    globalThis.process.kill(running.process.pid, "SIGKILL")
    await running.process.exited
    await this.start(name, running.env, running.readyUrls, running.nodeArgs)
  }

  async stopAll() {
    await Promise.all([...this.#running.values()].map(({ process }) => process.stop(10_000)))
  }
}
