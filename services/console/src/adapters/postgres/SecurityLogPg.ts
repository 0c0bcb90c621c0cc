import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { type LogPage, type SecurityAction, SecurityLog } from "../../ports/SecurityLog.js"

interface EventRow {
  readonly id: string
  readonly tenantId: string | null
  readonly at: Date
  readonly actorSub: string | null
  readonly actorEmail: string
  readonly action: SecurityAction
  readonly target: string | null
  readonly ip: string
  readonly userAgent: string
  readonly detail: Record<string, string | number | null>
}

export const SecurityLogPg = Layer.effect(
  SecurityLog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // `security_events_tenant` (tenant_id, at DESC) serves both, null tenant included.
    const listOf = (tenantId: string | null, { limit, sinceMs }: LogPage) =>
      sql<EventRow>`SELECT id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail
                    FROM console.security_events
                    WHERE ${tenantId === null ? sql`tenant_id IS NULL` : sql`tenant_id = ${tenantId}`} ${sinceMs === undefined ? sql`` : sql`AND at >= ${new Date(sinceMs)}`}
                    ORDER BY at DESC, id LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map(({ at, ...r }) => ({ ...r, atMs: at.getTime() }))),
        Effect.orDie
      )
    return SecurityLog.of({
      record: (events) =>
        events.length === 0 ? Effect.void : sql`INSERT INTO console.security_events ${
          sql.insert(events.map((e) => ({
            id: e.id,
            tenantId: e.tenantId,
            at: new Date(e.atMs),
            actorSub: e.actorSub,
            actorEmail: e.actorEmail,
            action: e.action,
            target: e.target,
            ip: e.ip,
            userAgent: e.userAgent,
            detail: JSON.stringify(e.detail)
          })))
        }`.pipe(Effect.asVoid, Effect.orDie),
      list: (tenantId, options) => listOf(tenantId, options),
      listUnattributed: (options) => listOf(null, options)
    })
  })
)
