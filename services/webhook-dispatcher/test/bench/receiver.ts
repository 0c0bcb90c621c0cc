import { createServer } from "node:http"

/**
 * A webhook receiver in a process of its own, so that neither the dispatcher nor the bare loop
 * shares its event loop: answers 204 to every POST and keeps (arrival time, event id, path) for
 * `GET /stats`, which answers them and forgets them. Prints its port once listening.
 */
let seen: Array<readonly [number, string, string]> = []
const server = createServer((request, response) => {
  if (request.method === "GET") {
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(seen))
    seen = []
    return
  }
  request.resume()
  request.on("end", () => {
    seen.push([Date.now(), String(request.headers["x-service-event-id"] ?? ""), request.url ?? ""])
    response.writeHead(204).end()
  })
})
server.keepAliveTimeout = 75_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : ""}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
