import { SqlClient, SqlSchema } from "effect/sql"
import { DeliveryStatus, WebhookEventKind } from "@portfolio/domain"
import { Effect, Layer, Option, Schema } from "effect"
import { type ClaimedDelivery, DeliveryRepository, type DeliveryRecord, type DeliveryResolution, type NewDelivery, type ReceivedEvent } from "../../ports/DeliveryRepository.js"
import { SecretSealer } from "./SealedSecrets.js"
import { makeTargetOpener, type TargetColumns } from "./SubscriptionRows.js"
import { makeStatementBatcher, MaxStatementRows, rowsPerInput } from "./StatementBatcher.js"
import { makeFirstSuccessBatcher, makeSuccessBatcher } from "./SuccessBatcher.js"

const DeliveryRow = Schema.Struct({
  id: Schema.String,
  subscriptionId: Schema.String,
  eventId: Schema.String,
  eventType: WebhookEventKind,
  status: DeliveryStatus,
  failureReason: Schema.NullOr(Schema.Literals(["attempts_exhausted", "subscription_disabled"])),
  attempts: Schema.Number,
  nextAttemptAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})

/**
 * A leased delivery as the hot statements (a recording, a claim) answer it: columns aliased to
 * these names, read with no name transform and no Schema. They are the dispatcher's own rows, typed
 * by their columns; measured, the transform and the decoding of seventeen columns per delivery were
 * an eighth of everything a delivery allocated, and their garbage the main cost of the
 * old-generation collections under a burst.
 */
interface LeasedRow extends DeliveryRecord, Readonly<typeof TargetColumns.Type> {
  readonly roundAttempts: number
  /** The lease's end as text, so that it compares exactly when given back. */
  readonly lease: string
}

const TargetAliases = `s.tenant_id AS "tenantId", s.url, s.state, s.sealed_secret AS "sealedSecret",
  s.sealed_previous_secret AS "sealedPreviousSecret", s.previous_secret_expires_at AS "previousSecretExpiresAt"`

/**
 * Whether subscription `s` is to receive incoming event `i` (its "tenantId", type and "createdAt"):
 * enabled, of its tenant, created before it, listening to its kind.
 */
const Listens = `s.tenant_id = i."tenantId" AND s.state = 'enabled' AND s.created_at <= i."createdAt"
  AND (s.kinds IS NULL OR s.kinds @> jsonb_build_array(i.type))`

const Counted = Schema.Struct({ consecutiveFailures: Schema.Number, state: Schema.Literals(["enabled", "disabled"]) })

const AttemptRow = Schema.Struct({
  id: Schema.String,
  deliveryId: Schema.String,
  attempt: Schema.Number,
  startedAt: Schema.Date,
  durationMs: Schema.Number,
  statusCode: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  responseBody: Schema.String
})

const Submission = Schema.Struct({ id: Schema.String, subscriptionId: Schema.String })

/** How far the database's clock may be behind the dispatcher's for a retry to be taken on time. */
const ClockSkewMs = 250

const DeliveryColumns = "d.id, d.subscription_id, d.event_id, e.type AS event_type, d.status, d.failure_reason, d.attempts, d.next_attempt_at, d.created_at, d.updated_at"

export const DeliveryRepositoryPg = Layer.effect(
  DeliveryRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const openTarget = makeTargetOpener(yield* SecretSealer)
    const recordSuccess = yield* makeSuccessBatcher(sql)
    const recordFirstSuccess = yield* makeFirstSuccessBatcher(sql)
    // The hot statements' rows keep the names their SQL gives them (LeasedRow).
    const raw = sql.withoutTransforms()
    const claimedOf = (row: LeasedRow, body: string, traceparent: string | null): ClaimedDelivery => ({
      delivery: {
        id: row.id,
        subscriptionId: row.subscriptionId,
        eventId: row.eventId,
        eventType: row.eventType,
        status: row.status,
        failureReason: row.failureReason,
        attempts: row.attempts,
        nextAttemptAt: row.nextAttemptAt,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt
      },
      roundAttempt: row.roundAttempts + 1,
      body,
      traceparent,
      lease: row.lease,
      target: openTarget(row.subscriptionId, row)
    })

    // Who is to receive the events heard meanwhile, in one read: the subscriptions without a
    // delivery of the event yet, so that an event the broker gives again after a crash goes only
    // where it was not recorded as delivered.
    const listening = yield* makeStatementBatcher((events: ReadonlyArray<ReceivedEvent>) =>
      raw<typeof TargetColumns.Type & { readonly eventId: string; readonly subscriptionId: string }>`
        SELECT i.id AS "eventId", s.id AS "subscriptionId", ${raw.unsafe(TargetAliases)}
        FROM json_to_recordset(${JSON.stringify(events.map(({ createdAt, id, tenantId, type }) => ({ id, tenantId, type, createdAt })))}::json)
          AS i(id uuid, "tenantId" uuid, type text, "createdAt" timestamptz)
        JOIN webhook_dispatcher.subscriptions s ON ${raw.unsafe(Listens)}
        WHERE NOT EXISTS (SELECT 1 FROM webhook_dispatcher.deliveries d WHERE d.event_id = i.id AND d.subscription_id = s.id)`.pipe(
        Effect.map((rows) => rowsPerInput(events, rows, (e) => e.id, (r) => r.eventId).map((own) => own.map((row) => openTarget(row.subscriptionId, row))))
      ), MaxStatementRows)

    // One statement for the deliveries to record pending meanwhile (first attempts that failed, or
    // waited too long), each under the id its first attempt carried: its event is kept when new
    // (the foreign key is checked at the statement's end, once both are in; the bodies travel as
    // JSON strings, which give back exactly the same text), and it is born leased to this process,
    // with its subscription as the statement saw it, so that its next attempt needs no claim.
    const recordPendings = yield* makeStatementBatcher((batch: ReadonlyArray<{ readonly event: ReceivedEvent; readonly delivery: NewDelivery; readonly leaseMs: number }>) =>
      raw<LeasedRow>`
        WITH incoming AS (
          SELECT * FROM json_to_recordset(${JSON.stringify(batch.map(({ delivery, event }) => ({ ...event, ...delivery })))}::json)
            AS i(id uuid, "tenantId" uuid, type text, body text, traceparent text, "createdAt" timestamptz, "subscriptionId" uuid, "deliveryId" uuid)
        ), listening AS (
          SELECT i.id AS event_id, i.type AS event_type, i."deliveryId" AS delivery_id, s.id AS subscription_id, s.tenant_id, s.url, s.state,
            s.sealed_secret, s.sealed_previous_secret, s.previous_secret_expires_at
          FROM incoming i JOIN webhook_dispatcher.subscriptions s ON s.id = i."subscriptionId" AND ${raw.unsafe(Listens)}
        ), kept AS (
          INSERT INTO webhook_dispatcher.events (id, tenant_id, type, body, traceparent, created_at)
          SELECT DISTINCT ON (id) id, "tenantId", type, body, traceparent, "createdAt" FROM incoming i
          WHERE EXISTS (SELECT 1 FROM listening l WHERE l.event_id = i.id)
          ON CONFLICT (id) DO NOTHING
        ), created AS (
          INSERT INTO webhook_dispatcher.deliveries (id, event_id, subscription_id, status, next_attempt_at, lease_until)
          SELECT DISTINCT ON (event_id, subscription_id) delivery_id, event_id, subscription_id, 'pending', now(),
            now() + ${Math.max(...batch.map((b) => b.leaseMs))} * interval '1 millisecond'
          FROM listening
          ON CONFLICT (event_id, subscription_id) DO NOTHING
          RETURNING id, event_id, subscription_id, status, failure_reason, attempts, round_attempts, next_attempt_at, lease_until, created_at, updated_at
        )
        SELECT c.id, c.subscription_id AS "subscriptionId", c.event_id AS "eventId", l.event_type AS "eventType",
          c.status, c.failure_reason AS "failureReason", c.attempts, c.round_attempts AS "roundAttempts", c.next_attempt_at AS "nextAttemptAt",
          c.created_at AS "createdAt", c.updated_at AS "updatedAt", c.lease_until::text AS lease, l.tenant_id AS "tenantId", l.url, l.state,
          l.sealed_secret AS "sealedSecret", l.sealed_previous_secret AS "sealedPreviousSecret", l.previous_secret_expires_at AS "previousSecretExpiresAt"
        FROM created c JOIN listening l ON l.delivery_id = c.id`.pipe(
        Effect.map((rows) =>
          rowsPerInput(batch, rows, (b) => b.delivery.deliveryId, (r) => r.id).map(([row], i) =>
            Option.map(Option.fromNullishOr(row), (recorded) => claimedOf(recorded, batch[i]!.event.body, batch[i]!.event.traceparent))))
      ), MaxStatementRows)

    // The leases of the deliveries whose lanes have room, taken together; each is taken only when
    // still pending, due and unleased (or leased by the caller, who names its lease), as it stands
    // now. "Due" allows ClockSkewMs: a retry's time was set by this process's clock, whose wake-up
    // is handled once that clock reaches it, and a database a little behind must not refuse it
    // (the retry would wait for the sweeper).
    const claimDeliveries = yield* makeStatementBatcher((claims: ReadonlyArray<{ readonly id: string; readonly leaseMs: number; readonly ownLease: string | null }>) =>
      raw<LeasedRow & { readonly body: string; readonly traceparent: string | null }>`UPDATE webhook_dispatcher.deliveries d SET lease_until = now() + ${Math.max(...claims.map((c) => c.leaseMs))} * interval '1 millisecond'
          FROM json_to_recordset(${JSON.stringify(claims.map((c) => ({ id: c.id, lease: c.ownLease })))}::json) AS c(id uuid, lease timestamptz),
            webhook_dispatcher.events e, webhook_dispatcher.subscriptions s
          WHERE d.id = c.id AND e.id = d.event_id AND s.id = d.subscription_id
            AND d.status = 'pending' AND d.next_attempt_at <= now() + ${ClockSkewMs} * interval '1 millisecond'
            AND (d.lease_until IS NULL OR d.lease_until < now() OR d.lease_until = c.lease)
          RETURNING d.id, d.subscription_id AS "subscriptionId", d.event_id AS "eventId", e.type AS "eventType", d.status,
            d.failure_reason AS "failureReason", d.attempts, d.round_attempts AS "roundAttempts", d.next_attempt_at AS "nextAttemptAt",
            d.created_at AS "createdAt", d.updated_at AS "updatedAt", d.lease_until::text AS lease, e.body, e.traceparent, ${raw.unsafe(TargetAliases)}`.pipe(
        Effect.map((rows) => rowsPerInput(claims, rows, (c) => c.id, (r) => r.id))
      ), MaxStatementRows)
    const deliveryColumns = sql.unsafe(DeliveryColumns)
    const decodeDeliveries = (rows: ReadonlyArray<unknown>) => Schema.decodeUnknownEffect(Schema.Array(DeliveryRow))(rows)
    const submissions = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      SqlSchema.findAll({ Request: Schema.Void, Result: Submission, execute: () => statement })(undefined).pipe(Effect.orDie)
    const findDelivery = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: DeliveryRow,
      execute: (id) => sql`SELECT ${deliveryColumns} FROM webhook_dispatcher.deliveries d JOIN webhook_dispatcher.events e ON e.id = d.event_id WHERE d.id = ${id}`
    })

    const settled = (resolution: DeliveryResolution) =>
      sql`status = ${resolution._tag === "Succeeded" ? "succeeded" : resolution._tag === "RetryAt" ? "pending" : "failed"},
          failure_reason = ${resolution._tag === "Failed" ? resolution.reason : null},
          next_attempt_at = ${resolution._tag === "RetryAt" ? resolution.at : null},
          lease_until = NULL, updated_at = now()`

    return DeliveryRepository.of({
      listening: (event) => listening(event).pipe(Effect.orDie),

      recordPending: (event, delivery, leaseMs) => recordPendings({ event, delivery, leaseMs }).pipe(Effect.orDie),

      recordFirstSuccess: (first) => recordFirstSuccess(first).pipe(Effect.orDie),

      claim: (id, leaseMs, ownLease) =>
        claimDeliveries({ id, leaseMs, ownLease: ownLease ?? null }).pipe(
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => claimedOf(row, row.body, row.traceparent))),
          Effect.orDie
        ),

      // One statement: the attempt, the delivery's next state and the subscription's count commit
      // together; a success on a count already at zero writes nothing to the subscription.
      complete: (attempt, resolution, subscriptionId, succeeded) =>
        succeeded
          ? recordSuccess({ attempt, subscriptionId }).pipe(Effect.as({ consecutiveFailures: 0, state: "enabled" as const }), Effect.orDie)
          : sql`
          WITH recorded AS (
            INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
            VALUES (${attempt.id}, ${attempt.deliveryId}, ${attempt.attempt}, ${attempt.startedAt}, ${attempt.durationMs},
                    ${attempt.statusCode}, ${attempt.error}, ${attempt.responseBody})
          ), moved AS (
            UPDATE webhook_dispatcher.deliveries SET ${settled(resolution)}, attempts = attempts + 1, round_attempts = round_attempts + 1
            WHERE id = ${attempt.deliveryId}
          ), counted AS (
            UPDATE webhook_dispatcher.subscriptions SET consecutive_failures = CASE WHEN ${succeeded} THEN 0 ELSE consecutive_failures + 1 END
            WHERE id = ${subscriptionId} AND (NOT ${succeeded} OR consecutive_failures <> 0)
            RETURNING consecutive_failures, state
          )
          SELECT consecutive_failures, state FROM counted
          UNION ALL SELECT 0, state FROM webhook_dispatcher.subscriptions WHERE id = ${subscriptionId} AND NOT EXISTS (SELECT 1 FROM counted)`.pipe(
            Effect.flatMap((rows) => Schema.decodeUnknownEffect(Counted)(rows[0] ?? { consecutiveFailures: 0, state: "disabled" })),
            Effect.orDie
          ),

      release: (deliveryId, resolution) =>
        sql`UPDATE webhook_dispatcher.deliveries SET ${settled(resolution)} WHERE id = ${deliveryId}`.pipe(Effect.asVoid, Effect.orDie),

      failPending: (subscriptionId, reason) =>
        sql`UPDATE webhook_dispatcher.deliveries SET status = 'failed', failure_reason = ${reason}, next_attempt_at = NULL, updated_at = now()
            WHERE subscription_id = ${subscriptionId} AND status = 'pending' RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie),

      overdue: (graceMs, limit) =>
        submissions(sql`SELECT id, subscription_id FROM webhook_dispatcher.deliveries
                        WHERE status = 'pending' AND next_attempt_at <= now() - ${graceMs} * interval '1 millisecond'
                          AND (lease_until IS NULL OR lease_until < now())
                        ORDER BY next_attempt_at LIMIT ${limit}`),

      find: (id) => findDelivery(id).pipe(Effect.orDie),

      list: (subscriptionId, status, limit) =>
        sql`SELECT ${deliveryColumns} FROM webhook_dispatcher.deliveries d JOIN webhook_dispatcher.events e ON e.id = d.event_id
            WHERE d.subscription_id = ${subscriptionId} ${status === undefined ? sql`` : sql`AND d.status = ${status}`}
            ORDER BY d.created_at DESC, d.id LIMIT ${limit}`.pipe(Effect.flatMap(decodeDeliveries), Effect.orDie),

      attempts: (deliveryId) =>
        SqlSchema.findAll({
          Request: Schema.String,
          Result: AttemptRow,
          execute: (id) =>
            sql`SELECT id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body
                FROM webhook_dispatcher.attempts WHERE delivery_id = ${id} ORDER BY attempt`
        })(deliveryId).pipe(Effect.orDie),

      redeliver: (id) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ readonly id: string; readonly inFlight: boolean }>`
            UPDATE webhook_dispatcher.deliveries d SET
              status = CASE WHEN in_flight THEN d.status ELSE 'pending' END,
              failure_reason = CASE WHEN in_flight THEN d.failure_reason ELSE NULL END,
              next_attempt_at = CASE WHEN in_flight THEN d.next_attempt_at ELSE now() END,
              round_attempts = CASE WHEN in_flight THEN d.round_attempts ELSE 0 END,
              updated_at = now()
            FROM (SELECT id, lease_until IS NOT NULL AND lease_until >= now() AS in_flight FROM webhook_dispatcher.deliveries WHERE id = ${id} FOR UPDATE) AS c
            WHERE d.id = c.id RETURNING d.id, c.in_flight`
          const row = rows[0]
          if (row === undefined) return Option.none()
          if (row.inFlight) return Option.some("in-flight" as const)
          return Option.map(yield* findDelivery(id), (d): DeliveryRecord | "in-flight" => d)
        }).pipe(Effect.orDie),

      recover: (subscriptionId, since) =>
        submissions(sql`UPDATE webhook_dispatcher.deliveries SET status = 'pending', failure_reason = NULL, next_attempt_at = now(),
                          round_attempts = 0, updated_at = now()
                        WHERE subscription_id = ${subscriptionId} AND status = 'failed' AND created_at >= ${since}
                        RETURNING id, subscription_id`)
    })
  })
)
