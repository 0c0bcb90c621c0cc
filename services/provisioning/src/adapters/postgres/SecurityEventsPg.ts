import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { type ProvisioningSecurityAction, SecurityEvents } from "../../ports/SecurityEvents.js"

interface EventRow {
  readonly id: string
  readonly tenantId: string
  readonly at: Date
  readonly actorSub: string | null
  readonly actorEmail: string
  readonly action: ProvisioningSecurityAction
  readonly target: string | null
  readonly ip: string
  readonly userAgent: string
  readonly detail: Record<string, string | number | null>
}

export const SecurityEventsPg = Layer.effect(
  SecurityEvents,
  Effect.map(SqlClient.SqlClient, (sql) =>
    SecurityEvents.of({
      record: ({ atMs, detail, ...event }) =>
        sql`INSERT INTO provisioning.security_events ${sql.insert({ ...event, at: new Date(atMs), detail: JSON.stringify(detail) })}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      list: (tenantId, { limit, sinceMs }) =>
        sql<EventRow>`SELECT id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail
                      FROM provisioning.security_events
                      WHERE tenant_id = ${tenantId} ${sinceMs === undefined ? sql`` : sql`AND at >= ${new Date(sinceMs)}`}
                      ORDER BY at DESC, id LIMIT ${limit}`.pipe(
          Effect.map((rows) => rows.map(({ at, ...r }) => ({ ...r, atMs: at.getTime() }))),
          Effect.orDie
        )
    }))
)
