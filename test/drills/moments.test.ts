import { connect, createServer } from "node:net"
import { describe, expect, it } from "vitest"
import { localTcpPorts, requestsInFlight } from "./moments.js"

// What the drills' kills read to tell the moment a victim died in (moments.ts).
describe("the moments of the drills' kills", () => {
  it("finds a process's connections by their local ports, as PostgreSQL and the receiver see them", async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as { port: number }
    const socket = connect(port, "127.0.0.1")
    await new Promise((resolve) => socket.once("connect", resolve))
    try {
      const ports = localTcpPorts(process.pid)
      expect(ports.has(port)).toBe(true)
      expect(ports.has(socket.localPort!)).toBe(true)
      expect(localTcpPorts(999_999_999).size).toBe(0)
    } finally {
      socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("reads from the ingress's access log the requests in flight to a gateway at its kill, and what their clients got", () => {
    const killedAt = 1_764_400_000_500
    const at = (ms: number) => (ms / 1000).toFixed(3)
    const log = [
      // Answered by the victim before the kill.
      `${at(killedAt - 100)} 127.0.0.1 "GET /api/v1/referentiel/applications?limit=20 HTTP/1.1" 200 512 0.010 127.0.0.1:4001 200`,
      // In flight to it at the kill: retried on the other, 200.
      `${at(killedAt + 20)} 127.0.0.1 "GET /api/v1/referentiel/applications?limit=20 HTTP/1.1" 200 512 0.060 127.0.0.1:4001, 127.0.0.1:4002 502, 200`,
      // A POST in flight to it: not retried, the ingress's 503.
      `${at(killedAt + 5)} 127.0.0.1 "POST /api/v1/tenant/invitations HTTP/1.1" 503 120 0.030 127.0.0.1:4001 502`,
      // Sent after the kill: refused, retried, never in flight to it.
      `${at(killedAt + 300)} 127.0.0.1 "GET /api/v1/referentiel/functions HTTP/1.1" 200 90 0.005 127.0.0.1:4001, 127.0.0.1:4002 502, 200`,
      // The other gateway's.
      `${at(killedAt + 10)} 127.0.0.1 "GET /api/v1/referentiel/applications HTTP/1.1" 200 512 0.040 127.0.0.1:4002 200`
    ].join("\n")
    expect(requestsInFlight(log, 4001, killedAt)).toEqual({ landed: true, state: "2 requests in flight (1 retried on the other; answered 200×1, 503×1)" })
    expect(requestsInFlight(log, 4001, killedAt - 1_000)).toEqual({ landed: false, state: "no request in flight" })
  })
})
