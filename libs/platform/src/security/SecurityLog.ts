import { SqlClient } from "effect/sql"
import { SecurityEvent, trusted } from "@portfolio/domain"
import { Array as Arr, Context, DateTime, Effect, Layer } from "effect"
import type { KeepFor, PruneRule } from "../sql/Retention.js"

/** Which entries a read answers: from `since` on, newest first, at most `limit`. */
export interface SecurityLogPage {
  readonly since?: DateTime.Utc | undefined
  readonly limit: number
}

/**
 * A service's security log (docs/product-rules.md#security-event-log). Each service keeps its own
 * table (`createSecurityEventsTable`) and decides which actions it records and when; the entries
 * share one shape so that the console merges the three logs. A storage failure is a defect, as
 * every unexpected SqlError of the platform is: an unreachable PostgreSQL answers 503 with
 * Retry-After (DependencyDown.ts), anything else is a bug.
 */
export interface SecurityLogShape {
  /** Records the entries as part of the enclosing unit of work: they are kept only if that work commits. */
  readonly record: (entries: SecurityEvent | ReadonlyArray<SecurityEvent>) => Effect.Effect<void>
  /** A tenant's entries, or with `null` those of no tenant (the console's unknown e-mails), newest first then by id. */
  readonly list: (tenantId: string | null, page: SecurityLogPage) => Effect.Effect<ReadonlyArray<SecurityEvent>>
}

export class SecurityLog extends Context.Service<SecurityLog, SecurityLogShape>()("@portfolio/platform/SecurityLog") {}

interface Row {
  readonly id: string
  readonly tenantId: string | null
  readonly at: Date
  readonly actorSub: string | null
  readonly actorEmail: string
  readonly action: string
  readonly target: string | null
  readonly ip: string
  readonly userAgent: string
  readonly detail: Record<string, string | number | null>
}

/** The security log in `<schema>.security_events`, the table of the service's own migrations. */
export const securityLogPg = (schema: string) =>
  Layer.effect(
    SecurityLog,
    Effect.map(SqlClient.SqlClient, (sql) => {
      const table = sql(`${schema}.security_events`)
      return SecurityLog.of({
        record: (entries) => {
          const all = Array.isArray(entries) ? entries as ReadonlyArray<SecurityEvent> : [entries as SecurityEvent]
          const rows = all.map(({ at, detail, ...entry }): Record<string, unknown> => ({ ...entry, at: DateTime.toDateUtc(at), detail: JSON.stringify(detail) }))
          return Arr.isReadonlyArrayNonEmpty(rows)
            ? sql`INSERT INTO ${table} ${sql.insert(rows)}`.pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("SecurityLog.record"))
            : Effect.void
        },
        // `security_events_tenant` (tenant_id, at DESC) serves both, null tenant included.
        list: (tenantId, { limit, since }) =>
          sql<Row>`SELECT id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail
                   FROM ${table}
                   WHERE ${tenantId === null ? sql`tenant_id IS NULL` : sql`tenant_id = ${tenantId}`} ${since === undefined ? sql`` : sql`AND at >= ${DateTime.toDateUtc(since)}`}
                   ORDER BY at DESC, id LIMIT ${limit}`.pipe(
            // Rows were valid entries when written: read back as they are, without a second check.
            Effect.map((rows) => rows.map(({ at, ...row }) => trusted(SecurityEvent, { ...row, at: DateTime.fromDateUnsafe(at) }))),
            Effect.orDie,
            Effect.withSpan("SecurityLog.list")
          )
      })
    })
  )

/**
 * A security log's retention (docs/product-rules.md, "Retention"): an entry recorded longer ago
 * than `keepFor` goes, read by the index `indexSecurityEventsByTime` adds.
 */
export const securityLogRetention = (schema: string, keepFor: KeepFor): PruneRule => ({
  table: `${schema}.security_events`,
  key: "id",
  keepFor,
  prunable: (sql, cutoff) => sql`at < ${cutoff}`
})
