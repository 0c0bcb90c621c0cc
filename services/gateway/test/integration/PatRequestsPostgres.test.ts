import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { NewPatRequest, PatRequestPendingMax } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import type { AdminCall } from "../../src/domain/OperatorActions.js"
import { approvePatRequest, denyPatRequest, filePatRequest } from "../../src/usecases/PatRequests.js"
import { MembershipDeskMemory } from "../support/MembershipDeskMemory.js"
import { GatewayStoresPgFresh } from "../support/PatRepositories.js"

const operator: AdminCall = { subject: "operator:ops", ip: "127.0.0.1", userAgent: "" }
const tenantId = "6b5a4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d"

const file = (userSub: string) => {
  const request = new NewPatRequest({ tenantId, userSub, email: `${userSub}@example.com`, role: "architect", scope: "write", justification: "CI pipeline publishing the application inventory." })
  return Effect.andThen(Effect.flatMap(MembershipDeskMemory, (m) => m.join(request)), filePatRequest(request, operator))
}

// What the use case tests show on the memory stores, here on the real ones: the migration, and
// the one arbiter of concurrent decisions being PostgreSQL itself.
describe("PAT requests on PostgreSQL (fresh database)", () => {
  layer(Layer.merge(GatewayStoresPgFresh("it_gw_reqs"), MembershipDeskMemory.layer), { timeout: 60_000 })((it) => {
    it.effect("20 concurrent approvals of one request mint exactly one token", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const filed = yield* file("racer")
        const outcomes = yield* Effect.all(
          Array.from({ length: 20 }, () => Effect.result(approvePatRequest(operator, filed.id, undefined))),
          { concurrency: "unbounded" }
        )
        const won = outcomes.flatMap((o) => (o._tag === "Success" ? [o.success] : []))
        expect(won).toHaveLength(1)
        expect(outcomes.filter((o) => o._tag === "Failure").map((o) => o.failure._tag)).toEqual(Array(19).fill("Conflict"))
        const tokens = yield* sql<{ readonly id: string }>`SELECT id FROM gateway.personal_access_tokens WHERE user_sub = 'racer'`
        expect(tokens.map((t) => t.id)).toEqual([won[0]!.pat.id])
        const [row] = yield* sql<{ readonly status: string; readonly patId: string }>`SELECT status, pat_id FROM gateway.pat_requests WHERE id = ${filed.id}`
        expect(row).toEqual({ status: "approved", patId: won[0]!.pat.id })
      }))

    it.effect("20 concurrent filings of one member keep exactly 5 pending requests; the others are 409 and keep nothing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const outcomes = yield* Effect.all(Array.from({ length: 20 }, () => Effect.result(file("flooder"))), { concurrency: "unbounded" })
        const kept = outcomes.flatMap((o) => (o._tag === "Success" ? [o.success.id] : []))
        expect(kept).toHaveLength(PatRequestPendingMax)
        expect(outcomes.flatMap((o) => (o._tag === "Failure" ? [o.failure._tag] : []))).toEqual(Array(20 - PatRequestPendingMax).fill("Conflict"))
        const rows = yield* sql<{ readonly id: string }>`SELECT id FROM gateway.pat_requests WHERE tenant_id = ${tenantId} AND user_sub = 'flooder'`
        expect(rows.map((r) => r.id).sort()).toEqual([...kept].sort())
        const logged = yield* sql<{ readonly target: string }>`
          SELECT target FROM gateway.security_events WHERE action = 'pat_requested' AND detail->>'requester' = 'flooder@example.com'`
        expect(logged.map((e) => e.target).sort()).toEqual([...kept].sort())
      }))

    it.effect("an approval racing a denial: one of them decides, the other is 409", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const filed = yield* file("contested")
        const [approval, denial] = yield* Effect.all(
          [Effect.result(approvePatRequest(operator, filed.id, undefined)), Effect.result(denyPatRequest(operator, filed.id, undefined, "Not needed."))],
          { concurrency: "unbounded" }
        )
        expect([approval._tag, denial._tag].sort()).toEqual(["Failure", "Success"])
        const tokens = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM gateway.personal_access_tokens WHERE user_sub = 'contested'`
        expect(tokens[0]!.n).toBe(approval._tag === "Success" ? 1 : 0)
      }))

    it.effect("the migration holds a request's decision to its state", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const filed = yield* file("constrained")
        const refused = (statement: Effect.Effect<unknown, unknown>) => Effect.map(Effect.result(statement), (e) => e._tag)
        // Approved without a token, denied without a reason, a token that does not exist: all refused.
        expect(yield* refused(sql`UPDATE gateway.pat_requests SET status = 'approved', decided_at = now(), decided_by_sub = 'x', decided_by_role = 'operator' WHERE id = ${filed.id}`)).toBe("Failure")
        expect(yield* refused(sql`UPDATE gateway.pat_requests SET status = 'denied', decided_at = now(), decided_by_sub = 'x', decided_by_role = 'operator' WHERE id = ${filed.id}`)).toBe("Failure")
        expect(
          yield* refused(sql`UPDATE gateway.pat_requests SET status = 'approved', decided_at = now(), decided_by_sub = 'x', decided_by_role = 'operator', pat_id = ${filed.id} WHERE id = ${filed.id}`)
        ).toBe("Failure")
        expect(yield* refused(sql`UPDATE gateway.pat_requests SET justification = 'too short' WHERE id = ${filed.id}`)).toBe("Failure")
        // Closed without its reason, or naming a decider (nobody decided it): refused.
        expect(yield* refused(sql`UPDATE gateway.pat_requests SET status = 'closed', decided_at = now() WHERE id = ${filed.id}`)).toBe("Failure")
        expect(
          yield* refused(sql`UPDATE gateway.pat_requests SET status = 'closed', decided_at = now(), reason = 'left', decided_by_sub = 'x', decided_by_role = 'operator' WHERE id = ${filed.id}`)
        ).toBe("Failure")
        expect(yield* refused(sql`UPDATE gateway.pat_requests SET status = 'withdrawn', decided_at = now(), reason = 'left' WHERE id = ${filed.id}`)).toBe("Failure")
        const [row] = yield* sql<{ readonly status: string }>`SELECT status FROM gateway.pat_requests WHERE id = ${filed.id}`
        expect(row?.status).toBe("pending")
        const [migration] = yield* sql<{ readonly name: string }>`SELECT name FROM gateway.migrations WHERE migration_id = 2`
        expect(migration?.name).toBe("create_pat_requests")
      }))
  })
})
