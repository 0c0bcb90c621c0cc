import { createServer } from "node:http"
import pg from "pg"
import { ApplicationSelect } from "../../services/referential/src/adapters/postgres/ApplicationSelect.js"

/**
 * The read path's honest ceiling: node:http and node-postgres running the referential's own
 * SELECT of one application (as ApplicationRepositoryPg runs it, regulations and role assignments
 * included) for `GET /referentiel/applications/{code}`, with the tenant given as argument, and
 * answering the row as JSON. No framework, no authentication: what the machine can do at best.
 * Prints its port once listening.
 */
const [databaseUrl, tenantId] = [process.argv[2]!, process.argv[3]!]
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })
const select = `${ApplicationSelect} WHERE a.tenant_id = $1 AND a.code = $2`
const server = createServer((request, response) => {
  const path = (request.url ?? "").split("?")[0]!
  const code = decodeURIComponent(path.slice(path.lastIndexOf("/") + 1))
  pool.query(select, [tenantId, code]).then(
    ({ rows }) => {
      const body = rows.length === 0 ? "{}" : JSON.stringify(rows[0])
      response.writeHead(rows.length === 0 ? 404 : 200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      response.end(body)
    },
    () => {
      response.writeHead(500)
      response.end()
    }
  )
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  console.log(typeof address === "object" && address !== null ? address.port : "")
})
process.on("SIGTERM", () => server.close(() => void pool.end().then(() => process.exit(0))))
