import { type ChildProcess, spawn } from "node:child_process"
import net, { type AddressInfo } from "node:net"

/**
 * nats-server processes of tests and benchmarks, without a test runner's hooks (a benchmark
 * script imports this too).
 */
export const NatsServerBinary = "/usr/sbin/nats-server"

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

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

/**
 * A JetStream nats-server that a fault test can kill and start again on the same port and store,
 * as an operator's restart would: what the stream held survives, connections drop meanwhile.
 */
export const restartableJetStream = async (storeDir: string) => {
  const port = await freePort()
  let server: ChildProcess | undefined
  const start = async () => {
    const started = spawn(NatsServerBinary, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdio: "ignore" })
    server = started
    for (let attempt = 0; !(await accepts(port)); attempt++) {
      if (attempt >= 200 || started.exitCode !== null) throw new Error(`nats-server on ${port} did not start`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
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
      server?.kill("SIGKILL")
      await new Promise((resolve) => (server?.exitCode !== null || server?.signalCode !== null ? resolve(undefined) : server.once("exit", resolve)))
      await start()
    },
    stop: () => (server === undefined ? Promise.resolve() : stop(server))
  }
}
