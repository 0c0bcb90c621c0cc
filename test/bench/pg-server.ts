import { createServer } from "node:http"
import pg from "pg"

/**
 * The read path's honest ceiling: node:http and node-postgres running the referential's own
 * SELECT of one application (as ApplicationRepositoryPg runs it, regulations and role assignments
 * included) for `GET /referentiel/applications/{code}`, with the tenant given as argument, and
 * answering the row as JSON. No framework, no authentication: what the machine can do at best.
 * Prints its port once listening.
 */
const [databaseUrl, tenantId] = [process.argv[2]!, process.argv[3]!]
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 })
const select = `
  SELECT a.code, a.name, a.description, a.parent_code, a.status, a.data_classification, a.criticality,
    a.rto_hours, a.rpo_hours, a.license_cost, a.support_cost, a.infra_cost, a.staff_cost, a.legacy_annual_cost,
    a.revision, a.created_at, a.updated_at,
    ARRAY(
      SELECT r.regulation::text FROM referential.application_regulations r
      WHERE r.tenant_id = a.tenant_id AND r.application_code = a.code ORDER BY r.regulation
    ) AS regulations,
    COALESCE((
      SELECT json_agg(json_build_object('role', s.role, 'contact', s.contact) ORDER BY s.position)
      FROM referential.application_role_assignments s
      WHERE s.tenant_id = a.tenant_id AND s.application_code = a.code
    ), '[]'::json) AS role_assignments
  FROM referential.applications a WHERE a.tenant_id = $1 AND a.code = $2`
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
