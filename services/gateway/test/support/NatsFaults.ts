import net, { type AddressInfo } from "node:net"

/** The subjects of a key-value bucket's reads and writes. */
const KvSubjects = ["$KV.", "$JS.API.DIRECT.GET.", "$JS.API.STREAM.MSG.GET."]

/** Reads one connection's bytes to NATS (`PUB`/`HPUB` lines, each followed by its payload) and calls `counted` for each publish to the key-value subjects. */
const kvRequestReader = (counted: () => void) => {
  let pending = Buffer.alloc(0)
  let payloadLeft = 0
  return (data: Buffer) => {
    pending = Buffer.concat([pending, data])
    for (;;) {
      if (payloadLeft > 0) {
        const skipped = Math.min(payloadLeft, pending.length)
        pending = pending.subarray(skipped)
        payloadLeft -= skipped
        if (payloadLeft > 0) return
      }
      const end = pending.indexOf("\r\n")
      if (end < 0) return
      const [op, subject = "", ...rest] = pending.subarray(0, end).toString("latin1").split(" ")
      pending = pending.subarray(end + 2)
      if (op !== "PUB" && op !== "HPUB") continue
      if (KvSubjects.some((prefix) => subject.startsWith(prefix))) counted()
      payloadLeft = Number(rest[rest.length - 1]) + 2
    }
  }
}

/**
 * A TCP relay to NATS that can start dropping everything, as a network partition would, without
 * closing, or delay what its clients send, as a slow link would, and counts the key-value reads and
 * writes they send. On `port` when given: a relay closed and opened again there is NATS coming back
 * for the clients that were configured with it.
 */
export const blackholeProxy = async (targetPort: number, port = 0) => {
  let frozen = false
  let delayMs = 0
  const sockets = new Set<net.Socket>()
  let kvRequests = 0
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1")
    const read = kvRequestReader(() => kvRequests++)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("error", () => undefined)
    }
    client.on("data", (data) => {
      if (frozen) return
      read(data)
      if (delayMs === 0) upstream.write(data)
      else setTimeout(() => upstream.write(data), delayMs)
    })
    upstream.on("data", (data) => void (frozen || client.write(data)))
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", resolve)
  })
  return {
    port: (server.address() as AddressInfo).port,
    freeze: () => {
      frozen = true
    },
    /** Holds each of the clients' writes `ms` before passing it on, in order. */
    delay: (ms: number) => {
      delayMs = ms
    },
    /** Key-value reads and writes sent through the relay so far, all connections together. */
    kvRequests: () => kvRequests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}
