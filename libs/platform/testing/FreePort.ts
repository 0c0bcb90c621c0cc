import { createServer } from "node:net"

/** The port `port` if it can be listened on at 127.0.0.1 now, else undefined. */
const listenable = (port: number): Promise<number | undefined> =>
  new Promise((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(undefined))
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : undefined))
    })
  })

/**
 * Ports are taken from ranges below the ephemeral range the OS hands out to outgoing connections
 * (32768 and up here): a port the OS picked was free when asked, but between its close and the
 * service's bind, an outgoing connection of anything on the machine could take it. Seen: a fresh
 * CI's drills lost a gateway to EADDRINUSE on 38549 while the rehearsal ran beside them. Under
 * vitest, each worker has a range of its own, since two workers asked at the same moment were
 * handed the same port and the service that lost the race exited while the other system's answered
 * its readiness probe in its place. Every other process (`npm start`, the drills, benchmarks)
 * takes from 30000-32767, from a random place.
 */
const poolId = Number(process.env["VITEST_POOL_ID"])
const range = Number.isInteger(poolId) && poolId > 0
  ? { start: 20_000 + ((poolId - 1) % 10) * 1_000, size: 1_000 }
  : { start: 30_000, size: 2_768 }
let next = Math.floor(Math.random() * range.size)

/** A TCP port of 127.0.0.1 free at the time of asking, never one the OS may hand an outgoing connection. */
export const freePort = async (): Promise<number> => {
  for (let tried = 0; tried < range.size; tried++) {
    const port = await listenable(range.start + (next++ % range.size))
    if (port !== undefined) return port
  }
  throw new Error(`no free port in ${range.start}-${range.start + range.size - 1}`)
}
