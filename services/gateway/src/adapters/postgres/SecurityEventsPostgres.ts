import { SqlClient, SqlSchema } from "@effect/sql"
import { SecurityEvent } from "@portfolio/domain"
import { DateTime, Effect, Layer, Schema } from "effect"
import { SecurityEvents } from "../../ports/SecurityEvents.js"
import { storeUnavailable } from "./StoreFailures.js"

/** A row as node-postgres reads it: the entry, with its time as a Date and its detail as parsed JSON. */
const Row = Schema.Struct({ ...SecurityEvent.fields, at: Schema.DateTimeUtcFromDate })

const unavailable = storeUnavailable("security log", "security log")

export const SecurityEventsPostgresLive = Layer.effect(
  SecurityEvents,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const list = SqlSchema.findAll({
      Request: Schema.Struct({ tenantId: Schema.String, since: Schema.UndefinedOr(Schema.DateFromSelf), limit: Schema.Number }),
      Result: Row,
      execute: ({ limit, since, tenantId }) =>
        sql`
          SELECT id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail
          FROM gateway.security_events
          WHERE ${sql.and([sql`tenant_id = ${tenantId}`, ...(since === undefined ? [] : [sql`at >= ${since}`])])}
          ORDER BY at DESC, id
          LIMIT ${limit}`
    })
    return SecurityEvents.of({
      record: ({ at, detail, ...event }) =>
        sql`INSERT INTO gateway.security_events ${sql.insert({ ...event, at: DateTime.toDateUtc(at), detail: JSON.stringify(detail) })}`.pipe(
          Effect.asVoid,
          Effect.catchAll(unavailable("record")),
          Effect.withSpan("SecurityEvents.record")
        ),
      list: (tenantId, { limit, since }) =>
        list({ tenantId, limit, since: since === undefined ? undefined : DateTime.toDateUtc(since) }).pipe(
          Effect.map((rows) => rows.map((row) => new SecurityEvent(row, true))),
          Effect.catchAll(unavailable("list")),
          Effect.withSpan("SecurityEvents.list")
        )
    })
  })
)
