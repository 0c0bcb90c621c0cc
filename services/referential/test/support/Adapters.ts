import { SqlClient } from "effect/sql"
import { ReferentialEvent } from "@portfolio/domain"
import type { UnitOfWork } from "@portfolio/platform/sql"
import { Context, Effect, Layer, Schema } from "effect"
import type { ReferentialOutbox } from "../../src/ports/ReferentialOutbox.js"
import type { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import type { DasRepository } from "../../src/ports/DasRepository.js"
import type { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import type { TenantRevisions } from "../../src/ports/TenantRevisions.js"
import { FreshReferentialPg } from "./FreshDatabase.js"
import { MemoryLayer } from "./Memory.js"
import { MemoryStore } from "./MemoryStore.js"

const tables = [
  "applications",
  "application_regulations",
  "application_role_assignments",
  "application_changes",
  "functions",
  "function_applications",
  "das"
] as const
type StoredRowCounts = Readonly<Record<(typeof tables)[number], number>>

/** How many rows of each table an adapter holds for a tenant: what a failed write must leave unchanged. */
export class StoredRows extends Context.Service<StoredRows, (tenantId: string) => Effect.Effect<StoredRowCounts>>()("test/StoredRows") {}

const storedInMemory = Layer.effect(
  StoredRows,
  Effect.map(MemoryStore, (memory) => (tenantId: string) =>
    memory.read(tenantId, (state) => {
      const applications = [...state.applications.values()]
      return {
        applications: applications.length,
        application_regulations: applications.reduce((n, record) => n + record.regulations.length, 0),
        application_role_assignments: applications.reduce((n, record) => n + record.roleAssignments.length, 0),
        application_changes: state.changes.length,
        functions: state.functions.size,
        function_applications: state.links.length,
        das: state.das.size
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

/** The events an adapter's outbox holds for a tenant, in the order the relay publishes them. */
export class StoredEvents extends Context.Service<
  StoredEvents,
  (tenantId: string) => Effect.Effect<ReadonlyArray<ReferentialEvent>>
>()("test/StoredEvents") {}

const eventsInMemory = Layer.effect(
  StoredEvents,
  Effect.map(MemoryStore, (memory) => (tenantId: string) => memory.read(tenantId, (state) => [...state.events]))
)

const decodeEvents = Schema.decodeUnknownEffect(Schema.Array(ReferentialEvent))
const eventsInPostgres = Layer.effect(
  StoredEvents,
  Effect.map(SqlClient.SqlClient, (sql) => (tenantId: string) =>
    sql<{ payload: unknown }>`
      SELECT payload FROM referential.outbox WHERE payload->>'tenantId' = ${tenantId} ORDER BY created_at, id`.pipe(
      Effect.flatMap((rows) => decodeEvents(rows.map((row) => row.payload))),
      Effect.orDie
    ))
)

type ReferentialPorts =
  | ReferentialOutbox
  | ApplicationRepository
  | DasRepository
  | FunctionRepository
  | TenantRevisions
  | UnitOfWork
  | StoredRows
  | StoredEvents

/**
 * Both adapters of the referential's ports, for the contract suites: every case runs against
 * each, so that the in-memory one the unit tests use cannot drift from PostgreSQL.
 */
export const adapters: ReadonlyArray<{ readonly name: string; readonly layer: Layer.Layer<ReferentialPorts, unknown> }> = [
  { name: "in memory", layer: Layer.merge(storedInMemory, eventsInMemory).pipe(Layer.provideMerge(MemoryLayer)) },
  { name: "PostgreSQL", layer: Layer.merge(storedInPostgres, eventsInPostgres).pipe(Layer.provideMerge(FreshReferentialPg)) }
]
