import { type ChildProcess, spawn } from "node:child_process"
import net from "node:net"
import { freePort } from "./FreePort.js"

/**
 * nats-server processes of tests and benchmarks, without a test runner's hooks (a benchmark
 * script imports this too).
 */
export const NatsServerBinary = "/usr/sbin/nats-server"

export const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

export const stop = (server: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null) return resolve()
    const killer = setTimeout(() => server.kill("SIGKILL"), 5_000)
    server.once("exit", () => {
      clearTimeout(killer)
      resolve()
    })
    server.kill("SIGTERM")
  })

/** A nats-server on `port` with `args`, once it accepts clients. */
const startServer = async (port: number, args: ReadonlyArray<string>) => {
  const started = spawn(NatsServerBinary, ["-a", "127.0.0.1", "-p", String(port), ...args], { stdio: "ignore" })
  for (let attempt = 0; !(await accepts(port)); attempt++) {
    if (attempt >= 200 || started.exitCode !== null) {
      started.kill("SIGKILL")
      throw new Error(`nats-server on ${port} did not start`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return started
}

/** SIGKILL, as a node lost; resolved once the process is gone. */
const killHard = (server: ChildProcess | undefined) =>
  new Promise<void>((resolve) => {
    if (server === undefined || server.exitCode !== null || server.signalCode !== null) return resolve()
    server.once("exit", () => resolve())
    server.kill("SIGKILL")
  })

/**
 * A JetStream nats-server that a fault test can kill and start again on the same port and store,
 * as an operator's restart would: what the stream held survives, connections drop meanwhile.
 */
export const restartableJetStream = async (storeDir: string) => {
  const port = await freePort()
  let server: ChildProcess | undefined
  const start = async () => {
    server = await startServer(port, ["-js", "-sd", storeDir])
  }
  await start()
  return {
    url: `nats://127.0.0.1:${port}`,
    /** The running server's process, for a benchmark's CPU accounting. */
    get pid() {
      return server?.pid ?? 0
    },
    /** SIGKILL, then a new server on the same port and store. */
    restart: async () => {
      await killHard(server)
      await start()
    },
    stop: () => (server === undefined ? Promise.resolve() : stop(server))
  }
}

/**
 * One server of a `jetStreamCluster`: its client URL, a kill -9 and restart on the same ports and
 * store, and a freeze (SIGSTOP: it holds its sockets and answers nothing, as a stalled host) and
 * its end.
 */
export interface ClusterServer {
  readonly name: string
  readonly url: string
  /** The running process's id; 0 while it is killed. */
  readonly pid: number
  readonly kill: () => Promise<void>
  readonly start: () => Promise<void>
  readonly freeze: () => void
  readonly resume: () => void
}

/**
 * `size` nats-servers clustered on loopback with JetStream (a cluster's minimum for a replicated
 * stream is three), each with a store under `storeDir`; `urls` is what NATS_URL would hold. Ready
 * once every server accepts clients; JetStream answers a few seconds later, when the servers have
 * elected their meta leader (a caller that creates a stream retries until then).
 */
export const jetStreamCluster = async (storeDir: string, size = 3) => {
  const nodes = await Promise.all(Array.from({ length: size }, async (_, i) => ({ name: `n${i + 1}`, port: await freePort(), clusterPort: await freePort() })))
  const processes = new Map<string, ChildProcess>()
  let stopped = false
  const startNode = async (node: (typeof nodes)[number]) => {
    // A fault's repair that comes after the cluster's stop (a drill cut short) starts nothing.
    if (stopped) throw new Error(`the cluster is stopped: ${node.name} is not started again`)
    const routes = nodes.filter((other) => other !== node).map((other) => `nats://127.0.0.1:${other.clusterPort}`).join(",")
    processes.set(node.name, await startServer(node.port, [
      "-n", node.name, "-js", "-sd", `${storeDir}/${node.name}`,
      "--cluster_name", "portfolio-test", "--cluster", `nats://127.0.0.1:${node.clusterPort}`, "--routes", routes
    ]))
  }
  try {
    await Promise.all(nodes.map(startNode))
  } catch (error) {
    await Promise.all([...processes.values()].map(stop))
    throw error
  }
  const running = (name: string) => {
    const server = processes.get(name)
    return server !== undefined && server.exitCode === null && server.signalCode === null ? server : undefined
  }
  const servers: ReadonlyArray<ClusterServer> = nodes.map((node) => ({
    name: node.name,
    url: `nats://127.0.0.1:${node.port}`,
    get pid() {
      return running(node.name)?.pid ?? 0
    },
    kill: () => killHard(processes.get(node.name)),
    start: () => startNode(node),
    freeze: () => processes.get(node.name)?.kill("SIGSTOP"),
    resume: () => processes.get(node.name)?.kill("SIGCONT")
  }))
  return {
    servers,
    urls: servers.map((server) => server.url).join(","),
    // A frozen server would take a SIGTERM only once resumed.
    stop: () => {
      stopped = true
      return Promise.all([...processes.values()].map((server) => (server.kill("SIGCONT"), stop(server)))).then(() => undefined)
    }
  }
}
