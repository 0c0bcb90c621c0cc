import net from "node:net"
import type { AddressInfo } from "node:net"

/** A loopback port nothing listens on (once closed), for a NATS that cannot be reached. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

/** A TCP relay to NATS that can start dropping everything, as a network partition would, without closing. */
export const blackholeProxy = async (targetPort: number) => {
  let frozen = false
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1")
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("error", () => undefined)
    }
    client.on("data", (data) => void (frozen || upstream.write(data)))
    upstream.on("data", (data) => void (frozen || client.write(data)))
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => {
      frozen = true
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}
