import { stampsOf } from "./Rows.js"

/**
 * The read of applications by key, without its WHERE: one statement per read, each row's
 * multi-valued fields by key (its regulations as one comma-separated text, its role assignments
 * as a JSON list), its times as milliseconds, in the columns `applicationRecordOf` decodes by hand
 * (Rows.ts). Used for one application and for a page of them. Plain text, so that the benchmark's
 * node:http + node-postgres ceiling (test/bench/pg-server.ts) runs exactly the statement the
 * service runs.
 */
export const ApplicationSelect = `
      SELECT a.code, a.name, a.description, a.parent_code, a.status, a.data_classification, a.criticality,
        a.rto_hours, a.rpo_hours, a.license_cost, a.support_cost, a.infra_cost, a.staff_cost, a.legacy_annual_cost,
        a.revision, ${stampsOf("a")},
        COALESCE((
          SELECT string_agg(r.regulation::text, ',' ORDER BY r.regulation) FROM referential.application_regulations r
          WHERE r.tenant_id = a.tenant_id AND r.application_code = a.code
        ), '') AS regulations,
        COALESCE((
          SELECT json_agg(json_build_object('role', s.role, 'contact', s.contact) ORDER BY s.position)
          FROM referential.application_role_assignments s
          WHERE s.tenant_id = a.tenant_id AND s.application_code = a.code
        ), '[]'::json) AS role_assignments
      FROM referential.applications a`
