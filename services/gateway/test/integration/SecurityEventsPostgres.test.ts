import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { NewPatRequest, SecurityEvent } from "@portfolio/domain"
import { UnitOfWork } from "@portfolio/platform"
import { DateTime, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { AdminCall } from "../../src/domain/OperatorActions.js"
import { SecurityEvents } from "../../src/ports/SecurityEvents.js"
import { approvePatRequest, filePatRequest } from "../../src/usecases/PatRequests.js"
import { MemoryMemberships } from "../support/MemoryMemberships.js"
import { GatewayStoresPostgresFresh } from "../support/PatStores.js"

const at = (iso: string) => DateTime.unsafeMake(iso)

const entry = (tenantId: string, iso: string, overrides: Partial<ConstructorParameters<typeof SecurityEvent>[0]> = {}) =>
  new SecurityEvent({
    id: randomUUID(),
    tenantId,
    at: at(iso),
    actorSub: "operator:ops",
    actorEmail: "",
    action: "pat_revoked",
    target: randomUUID(),
    ip: "192.0.2.10",
    userAgent: "portfolio-cli/1.4.0",
    detail: { tokenPrefix: "ap_pat_abc", days: 30, holder: null },
    ...overrides
  })

describe("SecurityEventsPostgres (fresh database)", () => {
  layer(Layer.merge(GatewayStoresPostgresFresh("it_gw_log"), MemoryMemberships.layer), { timeout: 60_000 })((it) => {
    it.effect("answers a tenant's entries as recorded, newest first, since a time, at most limit", () =>
      Effect.gen(function*() {
        const log = yield* SecurityEvents
        const tenantId = randomUUID()
        const first = entry(tenantId, "2026-07-01T10:00:00.000Z")
        const second = entry(tenantId, "2026-07-01T11:00:00.000Z", { action: "partner_client_created", target: "service-partner-erp", detail: { scope: "read" } })
        const third = entry(tenantId, "2026-07-01T12:00:00.000Z", { userAgent: "", detail: {} })
        for (const e of [second, first, third, entry(randomUUID(), "2026-07-01T13:00:00.000Z")]) yield* log.record(e)
        expect(yield* log.list(tenantId, { limit: 200 })).toEqual([third, second, first])
        expect(yield* log.list(tenantId, { since: second.at, limit: 200 })).toEqual([third, second])
        expect(yield* log.list(tenantId, { limit: 1 })).toEqual([third])
        expect(yield* log.list(randomUUID(), { limit: 200 })).toEqual([])
      }))

    it.effect("an entry recorded in a unit of work that fails is not kept", () =>
      Effect.gen(function*() {
        const log = yield* SecurityEvents
        const unitOfWork = yield* UnitOfWork
        const sql = yield* SqlClient.SqlClient
        const tenantId = randomUUID()
        const failed = yield* Effect.flip(unitOfWork.run(Effect.zipRight(log.record(entry(tenantId, "2026-07-02T10:00:00.000Z")), Effect.fail("after the entry"))))
        expect(failed).toBe("after the entry")
        expect(yield* sql`SELECT id FROM gateway.security_events WHERE tenant_id = ${tenantId}`).toEqual([])
        expect(yield* log.list(tenantId, { limit: 200 })).toEqual([])
      }))

    it.effect("an operator's approval enters the log with the token it minted; of racing approvals, only the winner's", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tenantId = randomUUID()
        const operator: AdminCall = { subject: "operator:ops", ip: "192.0.2.10", userAgent: "portfolio-cli/1.4.0" }
        const request = new NewPatRequest({ tenantId, userSub: "logged", email: "logged@example.com", role: "architect", scope: "read", days: 30, justification: "CI pipeline publishing the application inventory." })
        yield* Effect.flatMap(MemoryMemberships, (m) => m.join(request))
        const filed = yield* filePatRequest(request, operator)
        const outcomes = yield* Effect.all(Array.from({ length: 5 }, () => Effect.either(approvePatRequest(operator, filed.id, undefined))), { concurrency: "unbounded" })
        const won = outcomes.flatMap((o) => (o._tag === "Right" ? [o.right] : []))
        expect(won).toHaveLength(1)
        const rows = yield* sql`SELECT actor_sub, actor_email, action, target, ip, user_agent, detail
                                FROM gateway.security_events WHERE tenant_id = ${tenantId}`
        const by = { actorSub: "operator:ops", actorEmail: "", target: filed.id, ip: "192.0.2.10", userAgent: "portfolio-cli/1.4.0" }
        // Both at the test clock's one instant: their order is not the point.
        expect(rows).toHaveLength(2)
        expect(rows).toEqual(expect.arrayContaining([
          { ...by, action: "pat_requested", detail: { requester: "logged@example.com", scope: "read", days: 30 } },
          { ...by, action: "pat_request_approved", detail: { requester: "logged@example.com", role: "architect", scope: "read", tokenPrefix: won[0]!.pat.tokenPrefix } }
        ]))
      }))
  })
})
