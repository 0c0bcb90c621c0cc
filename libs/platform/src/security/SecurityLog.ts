import { SqlClient } from "effect/sql"
import { SecurityEvent, trusted } from "@portfolio/domain"
import { Array as Arr, Context, DateTime, Effect, Layer } from "effect"
import type { RequestOrigin } from "../http/ClientAddress.js"
import { newId } from "../ids/IdGenerator.js"
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

/**
 * The order of every list of entries, one log's or the console's merge of three: newest first,
 * then by id (PostgreSQL's `ORDER BY at DESC, id`: its uuids, lowercase, compare as their text).
 */
export const newestFirst = (a: SecurityEvent, b: SecurityEvent): number =>
  DateTime.Order(b.at, a.at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

// --- The writer: one way to make an entry, for the three services' actions. -----------------------

/** One action to record: who did what to which object, when, in which tenant (`null`: none). */
export interface SecurityLogEntry {
  readonly tenantId: string | null
  readonly at: DateTime.Utc
  readonly actorSub: string | null
  /** `""` for an operator, known by the name they sign with (`actorSub`). */
  readonly actorEmail: string
  /** One of the service's own actions (docs/product-rules.md#security-event-log). */
  readonly action: string
  /** The object acted on (an id, a userSub); never a secret. None by default. */
  readonly target?: string | null | undefined
  /** Never a password, a token, a client secret or a session id. Empty by default. */
  readonly detail?: Readonly<Record<string, string | number | null>> | undefined
}

/**
 * The entries of `entries`, from `origin` (the address and user agent of the request that made them), each with a new id (`newId`). Unchecked: the services
 * build them of their own ids, tenants and actions, which the table's types check again.
 */
export const securityEvents = (origin: RequestOrigin, entries: ReadonlyArray<SecurityLogEntry>): Effect.Effect<Array<SecurityEvent>> =>
  Effect.forEach(entries, (entry) =>
    Effect.map(newId, (id) =>
      trusted(SecurityEvent, {
        id,
        tenantId: entry.tenantId,
        at: entry.at,
        actorSub: entry.actorSub,
        actorEmail: entry.actorEmail,
        action: entry.action,
        target: entry.target ?? null,
        ip: origin.ip,
        userAgent: origin.userAgent,
        detail: entry.detail ?? {}
      })))

/**
 * Records `entries` (one action, in one tenant or several) from `origin` in the enclosing unit of
 * work, so that they are kept if and only if the action is. Each service decides which of its
 * actions it records and when (a door another service logs records nothing here).
 */
export const recordSecurityEvents = (origin: RequestOrigin, entries: ReadonlyArray<SecurityLogEntry>) =>
  Effect.gen(function*() {
    const securityLog = yield* SecurityLog
    yield* securityLog.record(yield* securityEvents(origin, entries))
  })

// --- The reader: a tenant's entries, for the console that merges them. ---------------------------

/**
 * The use case of an admin endpoint that answers a tenant's entries of the service's log, newest
 * first (the gateway's and provisioning's, for the console), in a span named `spanName`.
 */
export const tenantSecurityEvents = (spanName: string) =>
  Effect.fn(spanName)(function*(tenantId: string, page: SecurityLogPage) {
    const securityLog = yield* SecurityLog
    return yield* securityLog.list(tenantId, page)
  })

// --- The schema: the table, for each service's migrations. ----------------------------------------

/**
 * The table of a service's security log, for its migrations: the console, the gateway and
 * provisioning each keep theirs in this one shape, which the console merges (docs/security.md),
 * read by tenant, newest first. The console's own log also holds entries of no tenant (a failed
 * sign-in of an unknown e-mail): `tenant: "optional"`. Applied migrations ran this very text: it
 * must not change (a change is a new migration).
 */
export const createSecurityEventsTable = (schema: string, options: { readonly tenant: "required" | "optional" }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = sql(`${schema}.security_events`)
    yield* sql`
      CREATE TABLE ${table} (
        id uuid PRIMARY KEY,
        tenant_id uuid ${options.tenant === "required" ? sql.unsafe("NOT NULL") : sql.unsafe("")},
        at timestamptz NOT NULL,
        actor_sub text,
        actor_email text NOT NULL,
        action text NOT NULL,
        target text,
        ip text NOT NULL,
        user_agent text NOT NULL,
        detail jsonb NOT NULL
      )`
    yield* sql`CREATE INDEX security_events_tenant ON ${table} (tenant_id, at DESC)`
  })

/**
 * The index retention reads a security log by (`securityLogRetention`), for the migrations of a
 * service that made its table with `createSecurityEventsTable` before it existed: the oldest
 * entries of every tenant together, which `security_events_tenant` (per tenant) does not give.
 */
export const indexSecurityEventsByTime = (schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE INDEX security_events_at ON ${sql(`${schema}.security_events`)} (at)`)

// --- The PostgreSQL adapter and its retention. -----------------------------------------------------

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
export const SecurityLogPg = (schema: string) =>
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
