import { SqlClient, SqlSchema } from "effect/sql"
import { PatRequest, PatRequestDecider, PatRequestLifetimeDays, trusted } from "@portfolio/domain"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { PatRequestRepository } from "../../ports/PatRequestRepository.js"
import { requestExpiry } from "../../domain/PatRequestRules.js"
import { storeUnavailable } from "./StoreFailures.js"

/**
 * A row as node-postgres reads it: the request's own schema, with times as Dates and the decider in
 * three columns.
 */
const { decidedBy: _decidedBy, expiresAt: _expiresAt, ...requestFields } = PatRequest.fields
const Row = Schema.Struct({
  ...requestFields,
  createdAt: Schema.DateTimeUtcFromDate,
  decidedAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  decidedBySub: Schema.NullOr(Schema.String),
  decidedByEmail: Schema.NullOr(Schema.String),
  decidedByRole: Schema.NullOr(PatRequestDecider.fields.role)
})

const toRequest = ({ decidedByEmail, decidedByRole, decidedBySub, ...row }: typeof Row.Type) =>
  trusted(PatRequest, {
    ...row,
    expiresAt: requestExpiry(row.createdAt),
    decidedBy: decidedBySub === null || decidedByRole === null
      ? null
      : new PatRequestDecider({ userSub: decidedBySub, email: decidedByEmail, role: decidedByRole })
  })

const unavailable = storeUnavailable("PAT request store", "token store")

export const PatRequestRepositoryPg = Layer.effect(
  PatRequestRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Expiry is not stored: it follows from the filing time (PatRequestRules.requestExpiry). In
    // hours: a day of `interval` follows the session's time zone across a DST change, the rule does not.
    const unexpiredAt = (now: Date) => sql`created_at > ${now}::timestamptz - ${PatRequestLifetimeDays * 24} * interval '1 hour'`
    const statusAt = (status: string, now: Date) =>
      status === "pending"
        ? sql`status = 'pending' AND ${unexpiredAt(now)}`
        : status === "expired"
        ? sql`status = 'pending' AND NOT ${unexpiredAt(now)}`
        : sql`status = ${status}`
    const byId = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Row,
      execute: (id) => sql`SELECT * FROM gateway.pat_requests WHERE id = ${id}`
    })
    const list = SqlSchema.findAll({
      Request: Schema.Struct({
        tenantId: Schema.String,
        status: Schema.UndefinedOr(Schema.String),
        userSub: Schema.UndefinedOr(Schema.String),
        now: Schema.Date,
        after: Schema.UndefinedOr(Schema.Struct({ createdAt: Schema.Date, id: Schema.String })),
        limit: Schema.UndefinedOr(Schema.Number)
      }),
      Result: Row,
      // Keyset on pat_requests_tenant (tenant_id, created_at DESC, id): a page starts right after its cursor's row.
      execute: ({ after, limit, now, status, tenantId, userSub }) =>
        sql`
          SELECT * FROM gateway.pat_requests
          WHERE ${sql.and([
          sql`tenant_id = ${tenantId}`,
          ...(status === undefined ? [] : [statusAt(status, now)]),
          ...(userSub === undefined ? [] : [sql`user_sub = ${userSub}`]),
          ...(after === undefined ? [] : [sql`(created_at < ${after.createdAt} OR (created_at = ${after.createdAt} AND id > ${after.id}))`])
        ])}
          ORDER BY created_at DESC, id
          ${limit === undefined ? sql`` : sql`LIMIT ${limit}`}`
    })
    // The condition on the state makes the update the one arbiter of concurrent decisions: a
    // second transaction waits on the row's lock, then finds it no longer pending and changes nothing.
    const settle = SqlSchema.findOneOption({
      Request: Schema.Struct({
        id: Schema.String,
        status: Schema.String,
        decidedAt: Schema.Date,
        decidedBySub: Schema.String,
        decidedByEmail: Schema.NullOr(Schema.String),
        decidedByRole: Schema.String,
        reason: Schema.NullOr(Schema.String),
        patId: Schema.NullOr(Schema.String)
      }),
      Result: Row,
      execute: ({ id, ...decision }) =>
        sql`
          UPDATE gateway.pat_requests SET ${sql.update(decision)}
          WHERE id = ${id} AND status = 'pending' AND ${unexpiredAt(decision.decidedAt)}
          RETURNING *`
    })
    // A transaction-scoped advisory lock per holder serialises their filings: the count runs in a
    // statement of its own after the lock is granted, so its snapshot holds what the previous
    // filing of the holder committed (a count in the locking statement would not see it).
    const lockHolder = (tenantId: string, userSub: string) =>
      sql`SELECT pg_advisory_xact_lock(hashtextextended(${`gateway-pat-requests:${tenantId}:${userSub}`}, 0))`
    const pendingOf = SqlSchema.findOne({
      Request: Schema.Struct({ tenantId: Schema.String, userSub: Schema.String, now: Schema.Date }),
      Result: Schema.Struct({ n: Schema.Number }),
      // On pat_requests_pending_holder (tenant_id, user_sub) WHERE status = 'pending'.
      execute: ({ now, tenantId, userSub }) =>
        sql`
          SELECT count(*)::int AS n FROM gateway.pat_requests
          WHERE tenant_id = ${tenantId} AND user_sub = ${userSub} AND status = 'pending' AND ${unexpiredAt(now)}`
    })
    const closeHolder = SqlSchema.findAll({
      Request: Schema.Struct({ tenantId: Schema.String, userSub: Schema.String, filedBefore: Schema.Date, at: Schema.Date, reason: Schema.String }),
      Result: Row,
      execute: ({ at, filedBefore, reason, tenantId, userSub }) =>
        sql`
          UPDATE gateway.pat_requests SET status = 'closed', decided_at = ${at}, reason = ${reason}
          WHERE tenant_id = ${tenantId} AND user_sub = ${userSub} AND status = 'pending'
            AND created_at < ${filedBefore} AND ${unexpiredAt(at)}
          RETURNING *`
    })
    return PatRequestRepository.of({
      insert: (request) =>
        sql`
          INSERT INTO gateway.pat_requests ${sql.insert({
          id: request.id,
          tenantId: request.tenantId,
          userSub: request.userSub,
          email: request.email,
          role: request.role,
          scope: request.scope,
          days: request.days,
          justification: request.justification,
          status: request.status,
          createdAt: DateTime.toDateUtc(request.createdAt)
        })}
        `.pipe(Effect.asVoid, Effect.catch(unavailable("insert")), Effect.withSpan("PatRequestRepository.insert")),
      lockPendingOf: (holder, now) =>
        Effect.andThen(lockHolder(holder.tenantId, holder.userSub), pendingOf({ ...holder, now: DateTime.toDateUtc(now) })).pipe(
          Effect.map((row) => row.n),
          Effect.catch(unavailable("count of pending requests")),
          Effect.withSpan("PatRequestRepository.lockPendingOf")
        ),
      find: (id) =>
        byId(id).pipe(Effect.map(Option.map(toRequest)), Effect.catch(unavailable("lookup")), Effect.withSpan("PatRequestRepository.find")),
      list: (filter) =>
        list({
          tenantId: filter.tenantId,
          status: filter.status,
          userSub: filter.userSub,
          now: DateTime.toDateUtc(filter.now),
          after: filter.after === undefined ? undefined : { createdAt: DateTime.toDateUtc(filter.after.createdAt), id: filter.after.id },
          limit: filter.limit
        }).pipe(
          Effect.map((rows) => rows.map(toRequest)),
          Effect.catch(unavailable("list")),
          Effect.withSpan("PatRequestRepository.list")
        ),
      settle: (id, decision) =>
        settle({
          id,
          status: decision.status,
          decidedAt: DateTime.toDateUtc(decision.decidedAt),
          decidedBySub: decision.decidedBy.userSub,
          decidedByEmail: decision.decidedBy.email,
          decidedByRole: decision.decidedBy.role,
          reason: decision.status === "denied" ? decision.reason : null,
          patId: decision.status === "approved" ? decision.patId : null
        }).pipe(Effect.map(Option.map(toRequest)), Effect.catch(unavailable("decision")), Effect.withSpan("PatRequestRepository.settle")),
      closeHolder: (holder, filedBefore, at, reason) =>
        closeHolder({ ...holder, filedBefore: DateTime.toDateUtc(filedBefore), at: DateTime.toDateUtc(at), reason }).pipe(
          Effect.map((rows) => rows.map(toRequest)),
          Effect.catch(unavailable("closing")),
          Effect.withSpan("PatRequestRepository.closeHolder")
        )
    })
  })
)
