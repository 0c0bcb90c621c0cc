import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { pruneTables } from "@portfolio/platform/sql"
import { DayMs, FreshPgLive, printFigures, simulateRetention, spreadFrom } from "@portfolio/platform/testing"
import { Effect, Layer } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { gatewayRetention } from "../../src/adapters/postgres/Pruning.js"

const Database = MigrationsLive.pipe(Layer.provideMerge(FreshPgLive("it_gw_pruning", 4)))
const defaults = gatewayRetention({ securityLog: 365 * DayMs, patRequests: 30 * DayMs })
const now = new Date("2026-10-01T00:00:00.000Z")
const ago = (days: number) => new Date(now.getTime() - days * DayMs)
const tenantId = randomUUID()

type Settled = "pending" | "approved" | "denied" | "closed"

/** A token, for an approved request to name (the foreign key). */
const token = (createdAt: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    yield* sql`INSERT INTO gateway.personal_access_tokens (id, token_hash, token_prefix, tenant_id, user_sub, email, role, scope, created_at, expires_at)
               VALUES (${id}, ${randomBytes(32)}, 'ap_pat_abc', ${tenantId}, 'sub-1', 'a@acme.test', 'architect', 'read', ${createdAt},
                       ${new Date(createdAt.getTime() + 90 * DayMs)})`
    return id
  })

const request = (status: Settled, filed: Date, decided: Date | null) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    const patId = status === "approved" ? yield* token(decided!) : null
    const decider = status === "approved" || status === "denied" ? "admin-sub" : null
    const reason = status === "denied" ? "Not needed." : status === "closed" ? "Closed undecided: the requester was removed from the tenant." : null
    yield* sql`INSERT INTO gateway.pat_requests (id, tenant_id, user_sub, email, role, scope, days, justification, status, created_at,
                 decided_at, decided_by_sub, decided_by_email, decided_by_role, reason, pat_id)
               VALUES (${id}, ${tenantId}, 'sub-1', 'a@acme.test', 'architect', 'read', 30, 'CI pipeline publishing the inventory.', ${status},
                 ${filed}, ${decided}, ${decider}, ${decider === null ? null : "admin@acme.test"}, ${decider === null ? null : "tenant-admin"}, ${reason}, ${patId})`
    return id
  })

const securityEntries = (at: ReadonlyArray<Date>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO gateway.security_events (id, tenant_id, at, actor_sub, actor_email, action, target, ip, user_agent, detail)
        SELECT gen_random_uuid(), ${tenantId}, at::timestamptz, 'operator:ops', '', 'pat_revoked', null, '192.0.2.1', '', '{}'::jsonb
        FROM json_array_elements_text(${JSON.stringify(at.map((d) => d.toISOString()))}::json) AS at`)

const ids = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly id: string }>`SELECT id FROM ${sql(table)}`.pipe(Effect.map((rows) => rows.map((r) => r.id).sort())))

layer(Database, { timeout: 120_000, excludeTestServices: true })("the gateway's retention on PostgreSQL", (it) => {
  it.effect("prunes PAT requests settled 30 days ago and those expired 30 days ago, never a pending one; the log after a year", () =>
    Effect.gen(function*() {
      const gone = [
        yield* request("approved", ago(40), ago(31)),
        yield* request("denied", ago(35), ago(34)),
        yield* request("closed", ago(33), ago(32)),
        yield* request("pending", ago(61), null) // expired 31 days ago
      ]
      const kept = [
        yield* request("approved", ago(40), ago(29)),
        yield* request("denied", ago(29), ago(28)),
        yield* request("pending", ago(59), null), // expired 29 days ago: still listed as expired
        yield* request("pending", ago(2), null)
      ]
      const tokensBefore = yield* ids("gateway.personal_access_tokens")
      yield* securityEntries([ago(366), ago(700), ago(364), ago(1)])
      const outcome = yield* pruneTables(defaults, { now, batchSize: 2 })
      expect(outcome.pruned).toEqual({ "gateway.security_events": 2, "gateway.pat_requests": gone.length })
      expect(yield* ids("gateway.pat_requests")).toEqual([...kept].sort())
      // The approved request's token is not the request's to take.
      expect(yield* ids("gateway.personal_access_tokens")).toEqual(tokensBefore)
      expect(yield* ids("gateway.security_events")).toHaveLength(2)
    }))

  it.effect("measured: simulated days of traffic leave each table at its steady size once the longest period has passed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`TRUNCATE gateway.pat_requests, gateway.security_events`
      const EntriesPerDay = 40
      const days = 365 + 7
      // Each day: 40 operator entries in the log; 6 PAT requests filed, of which 2 approved and
      // 2 denied the same day, 1 closed the next day, and 1 left to expire 30 days later.
      const figures = yield* simulateRetention({
        days,
        start: new Date("2025-06-01T00:00:00.000Z"),
        rules: defaults,
        tables: ["gateway.security_events", "gateway.pat_requests"],
        traffic: (_day, dayStart) =>
          Effect.gen(function*() {
            const at = (minute: number) => new Date(dayStart.getTime() + minute * 60_000)
            yield* securityEntries(Array.from({ length: EntriesPerDay }, (_, i) => at(i * 30)))
            yield* sql`UPDATE gateway.pat_requests SET status = 'closed', decided_at = ${at(1)}, reason = 'Closed undecided: the requester was removed from the tenant.'
                       WHERE status = 'pending' AND justification = 'to be closed on the next day'`
            // In two statements rather than one per row, so that a year of days runs in seconds.
            const approved = [randomUUID(), randomUUID()].map((id) => ({ id, patId: randomUUID() }))
            yield* sql`INSERT INTO gateway.personal_access_tokens (id, token_hash, token_prefix, tenant_id, user_sub, email, role, scope, created_at, expires_at)
                       SELECT "patId", sha256(convert_to("patId"::text, 'UTF8')), 'ap_pat_abc', ${tenantId}, 'sub-1', 'a@acme.test', 'architect', 'read',
                         ${at(120)}, ${at(120)}::timestamptz + interval '90 days'
                       FROM json_to_recordset(${JSON.stringify(approved)}::json) AS a(id uuid, "patId" uuid)`.withoutTransform
            const rows = [
              ...approved.map(({ id, patId }) => ({ id, status: "approved", patId, reason: null })),
              ...["Not needed.", "Use the read scope."].map((reason) => ({ id: randomUUID(), status: "denied", patId: null, reason })),
              { id: randomUUID(), status: "pending", patId: null, reason: null, justification: "left to expire after thirty days" },
              { id: randomUUID(), status: "pending", patId: null, reason: null, justification: "to be closed on the next day" }
            ]
            yield* sql`INSERT INTO gateway.pat_requests (id, tenant_id, user_sub, email, role, scope, days, justification, status, created_at,
                         decided_at, decided_by_sub, decided_by_email, decided_by_role, reason, pat_id)
                       SELECT id, ${tenantId}, 'sub-1', 'a@acme.test', 'architect', 'read', 30, coalesce(justification, 'CI pipeline publishing the inventory.'),
                         status, ${at(60)}, CASE WHEN status = 'pending' THEN NULL ELSE ${at(120)}::timestamptz END,
                         CASE WHEN status = 'pending' THEN NULL ELSE 'admin-sub' END, CASE WHEN status = 'pending' THEN NULL ELSE 'admin@acme.test' END,
                         CASE WHEN status = 'pending' THEN NULL ELSE 'tenant-admin' END, reason, "patId"
                       FROM json_to_recordset(${JSON.stringify(rows)}::json)
                         AS r(id uuid, status text, "patId" uuid, reason text, justification text)`.withoutTransform
          })
      })
      yield* printFigures("gateway", figures, [1, 2, 7, 8, 30, 31, 32, 60, 61, 62, 365, 366, 367, days])
      // The log is kept a year; a settled request 30 days, an expired one 30 days after its expiry.
      expect(spreadFrom(figures, "gateway.security_events", 366)).toBe(0)
      expect(spreadFrom(figures, "gateway.pat_requests", 61)).toBe(0)
      const last = figures.at(-1)!.rows
      expect(last["gateway.security_events"]).toBe(365 * EntriesPerDay)
      // 30 days of the 5 settled a day (the closed one settled the day after its filing), 60 days of
      // the one that expires, and today's request still to be closed.
      expect(last["gateway.pat_requests"]).toBe(30 * 5 + 60 + 1)
    }))
})
