import { createServer, connect, type Socket } from "node:net"
import { outcome, sh } from "./shell.js"

/**
 * The pods' network: a podman bridge with its own subnet, on which each pod answers to the names of
 * the Services that select it (aardvark-dns), and whose gateway is the host. What runs on the host
 * for the pods (PostgreSQL, NATS, the OTLP receiver, the webhook receiver) listens on that gateway
 * address only, never on every interface.
 */
export const Network = { name: "portfolio-rehearsal", subnet: "10.89.77.0/24", gateway: "10.89.77.1" } as const

const AnchorPod = "portfolio-rehearsal-anchor"

/** Creates the network and brings its bridge up (podman makes it only when a first pod joins). */
export const createNetwork = async () => {
  await removeNetwork()
  await sh("podman", ["network", "create", "--driver", "bridge", "--subnet", Network.subnet, "--gateway", Network.gateway, Network.name])
  await sh("podman", ["pod", "create", "--name", AnchorPod, "--network", Network.name])
  await sh("podman", ["pod", "start", AnchorPod])
}

export const removeNetwork = async () => {
  await outcome("podman", ["pod", "rm", "--force", "--time", "0", AnchorPod])
  await outcome("podman", ["network", "rm", "--force", Network.name])
}

/**
 * Forwards connections to the network's gateway on `port` to 127.0.0.1:`target`, so that the pods
 * reach the host's PostgreSQL, which listens on loopback only, as a cluster reaches its database.
 */
export const relay = async (port: number, target: number): Promise<{ readonly close: () => Promise<void> }> => {
  // Closing waits for every connection to end, and a connection from a pod removed without closing
  // it never does (the rehearsal hung in its cleanup once): `close` ends them first.
  const open = new Set<Socket>()
  const server = createServer((inbound) => {
    open.add(inbound)
    inbound.once("close", () => open.delete(inbound))
    const outbound = connect({ host: "127.0.0.1", port: target })
    inbound.pipe(outbound).pipe(inbound)
    const close = () => (inbound.destroy(), outbound.destroy())
    inbound.once("error", close)
    outbound.once("error", close)
    inbound.once("close", close)
    outbound.once("close", close)
  })
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, Network.gateway, resolve))
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy()
        server.close(() => resolve())
      })
  }
}
