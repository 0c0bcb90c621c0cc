import { createServer } from "node:http"
import { Agent, type Dispatcher } from "undici"

/**
 * A proxy as the gateway's adapter forwards (services/gateway/src/adapters/http/UpstreamForwarderHttp.ts):
 * node:http in, undici's dispatch handler out over a keep-alive pool, the answer copied as it comes.
 * Nothing else (no admission, no logging). Prints its port once listening; arguments: the upstream's
 * origin, and optionally the one request header it passes on (the referential's assertion, which the
 * load generator signs).
 */
const origin = process.argv[2]!
const passed = process.argv[3]?.toLowerCase()
const agent = new Agent({ connections: 256, keepAliveTimeout: 60_000 })
const server = createServer((request, response) => {
  let started = false
  const value = passed === undefined ? undefined : request.headers[passed]
  const headers = typeof value === "string" ? { [passed!]: value } : {}
  agent.dispatch({ origin, method: "GET", path: request.url ?? "/", headers }, {
    onRequestStart() {},
    onResponseStart(_controller, statusCode, headers) {
      started = true
      response.writeHead(statusCode, { "content-type": String(headers["content-type"] ?? "application/json") })
    },
    onResponseData(_controller, chunk) {
      response.write(chunk)
    },
    onResponseEnd() {
      if (started) response.end()
    },
    onResponseError() {
      if (started) response.destroy()
      else response.writeHead(503).end()
    }
  } satisfies Dispatcher.DispatchHandler)
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  console.log(typeof address === "object" && address !== null ? address.port : "")
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
