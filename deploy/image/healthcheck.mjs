/* global process, console, fetch, AbortSignal */
// Docker's HEALTHCHECK of the image: /healthz on the admin port of the service the container runs.
// Kubernetes ignores it (the chart probes the admin port itself); `docker run` and compose use it.
// The service is found from the running process (`node dist/<service>/main.mjs`), and its port
// from that process's ADMIN_PORT, so that one image and one HEALTHCHECK serve every service
// whatever command and environment started it.
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** The services' default admin ports (libs/platform/src/config/Ports.ts; test/deploy/dockerfile.test.ts keeps them equal). */
export const AdminPorts = { gateway: 8081, referential: 8083, provisioning: 8085, "webhook-dispatcher": 8087, console: 8089 }

/** The service named by a command line, if it runs one of the bundles. */
export const serviceOf = (args) => {
  for (const arg of args) {
    const match = /(?:^|\/)dist\/([a-z-]+)\/main\.mjs$/.exec(arg)
    if (match !== null && match[1] in AdminPorts) return match[1]
  }
  return undefined
}

/** The admin port of a service process: its own ADMIN_PORT, else the service's default. */
export const adminPortOf = (service, environ) => {
  const set = environ.find((entry) => entry.startsWith("ADMIN_PORT="))?.slice("ADMIN_PORT=".length)
  return set !== undefined && set !== "" ? set : String(AdminPorts[service])
}

// Another root only for test/deploy/dockerfile.test.ts, which cannot rely on what this machine runs.
const proc = process.env.HEALTHCHECK_PROC_ROOT || "/proc"

const runningService = () => {
  for (const pid of readdirSync(proc).filter((entry) => /^\d+$/.test(entry))) {
    try {
      const service = serviceOf(readFileSync(`${proc}/${pid}/cmdline`, "utf8").split("\0"))
      if (service !== undefined) return { service, port: adminPortOf(service, readFileSync(`${proc}/${pid}/environ`, "utf8").split("\0")) }
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined
}

const check = async () => {
  const found = runningService()
  const service = found?.service
  const port = process.env.ADMIN_PORT || found?.port
  if (port === undefined) {
    // The CLI or a shell (the admintools pod): no server to probe.
    console.log("no service runs in this container")
    return 0
  }
  try {
    // Under the Dockerfile's --timeout=5s, with a second left for node to start: Docker kills the
    // probe at 5 s, and this way it says why before that.
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(4_000) })
    console.log(`${service ?? "admin port"} :${port}/healthz ${response.status}`)
    return response.ok ? 0 : 1
  } catch (error) {
    console.log(`${service ?? "admin port"} :${port}/healthz unreachable: ${error instanceof Error ? error.message : error}`)
    return 1
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await check()
