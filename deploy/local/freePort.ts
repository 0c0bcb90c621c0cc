import { createServer } from "node:net"

/** The port `port` (0: one the OS picks) if it can be listened on at 127.0.0.1 now, else undefined. */
const listenable = (port: number): Promise<number | undefined> =>
  new Promise((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(undefined))
    server.listen(port, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : undefined))
    })
  })

// Under vitest, each worker takes its ports from a range of its own, below the ephemeral range the
// OS hands out (and outgoing connections use): asked at the same moment, the OS gave two workers the
// same port, each closed it before its service bound it, and the service that lost the race exited
// while the other system's answered its readiness probe in its place.
const poolId = Number(process.env["VITEST_POOL_ID"])
const RangeSize = 1_000
const rangeStart = Number.isInteger(poolId) && poolId > 0 ? 20_000 + ((poolId - 1) % 10) * RangeSize : undefined
let next = Math.floor(Math.random() * RangeSize)

/** A TCP port of 127.0.0.1 free at the time of asking. */
export const freePort = async (): Promise<number> => {
  if (rangeStart === undefined) {
    const port = await listenable(0)
    if (port === undefined) throw new Error("the OS assigned no port")
    return port
  }
  for (let tried = 0; tried < RangeSize; tried++) {
    const port = await listenable(rangeStart + (next++ % RangeSize))
    if (port !== undefined) return port
  }
  throw new Error(`no free port in ${rangeStart}-${rangeStart + RangeSize - 1}`)
}
