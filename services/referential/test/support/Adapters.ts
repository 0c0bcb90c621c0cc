import { SqlClient } from "@effect/sql"
import type { UnitOfWork } from "@portfolio/platform"
import { Context, Effect, Layer } from "effect"
import type { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import type { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import type { TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { FreshReferentialPg } from "./FreshDatabase.js"
import { InMemoryReferential } from "./InMemoryReferential.js"
import { ReferentialMemory } from "./ReferentialMemory.js"

const tables = [
  "applications",
  "application_regulations",
  "application_role_assignments",
  "application_changes",
  "functions",
  "function_applications"
] as const
type StoredRowCounts = Readonly<Record<(typeof tables)[number], number>>

/** How many rows of each table an adapter holds for a tenant: what a failed write must leave unchanged. */
export class StoredRows extends Context.Tag("test/StoredRows")<StoredRows, (tenantId: string) => Effect.Effect<StoredRowCounts>>() {}

const storedInMemory = Layer.effect(
  StoredRows,
  Effect.map(ReferentialMemory, (memory) => (tenantId: string) =>
    memory.read(tenantId, (state) => {
      const applications = [...state.applications.values()]
      return {
        applications: applications.length,
        application_regulations: applications.reduce((n, record) => n + record.regulations.length, 0),
        application_role_assignments: applications.reduce((n, record) => n + record.roleAssignments.length, 0),
        application_changes: state.changes.length,
        functions: state.functions.size,
        function_applications: state.links.length
      }
    }))
)

const storedInPostgres = Layer.effect(
  StoredRows,
  Effect.map(SqlClient.SqlClient, (sql) => (tenantId: string) =>
    Effect.forEach(tables, (table) =>
      Effect.map(
        sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(`referential.${table}`)} WHERE tenant_id = ${tenantId}`,
        (rows) => [table, rows[0]!.n] as const
      )).pipe(Effect.map((counts) => Object.fromEntries(counts) as StoredRowCounts), Effect.orDie))
)

type ReferentialPorts = ApplicationRepository | FunctionRepository | TenantRevisions | UnitOfWork | StoredRows

/**
 * Both adapters of the referential's ports, for the contract suites: every case runs against
 * each, so that the in-memory one the unit tests use cannot drift from PostgreSQL.
 */
export const adapters: ReadonlyArray<{ readonly name: string; readonly layer: Layer.Layer<ReferentialPorts, unknown> }> = [
  { name: "in memory", layer: storedInMemory.pipe(Layer.provideMerge(InMemoryReferential)) },
  { name: "PostgreSQL", layer: storedInPostgres.pipe(Layer.provideMerge(FreshReferentialPg)) }
]
