import { readFileSync } from "node:fs"
import { createServer } from "node:http"

/**
 * The machine's ceiling: a node:http server in its own process answering the body of the file
 * given as argument, the same bytes the real endpoint answers. Prints its port once listening.
 */
const body = readFileSync(process.argv[2]!)
const server = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": body.length })
  response.end(body)
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  console.log(typeof address === "object" && address !== null ? address.port : "")
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
