import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { NewPatRequest } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { AdminCall } from "../../src/domain/OperatorActions.js"
import { approvePatRequest, filePatRequest } from "../../src/usecases/PatRequests.js"
import { MembershipDeskMemory } from "../support/MembershipDeskMemory.js"
import { GatewayStoresPgFresh } from "../support/PatRepositories.js"

describe("the gateway's security log over PostgreSQL (fresh database)", () => {
  layer(Layer.merge(GatewayStoresPgFresh("it_gw_log"), MembershipDeskMemory.layer), { timeout: 60_000 })((it) => {
    it.effect("an operator's approval enters the log with the token it minted; of racing approvals, only the winner's", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tenantId = randomUUID()
        const operator: AdminCall = { subject: "operator:ops", ip: "192.0.2.10", userAgent: "portfolio-cli/1.4.0" }
        const request = new NewPatRequest({ tenantId, userSub: "logged", email: "logged@example.com", role: "architect", scope: "read", days: 30, justification: "CI pipeline publishing the application inventory." })
        yield* Effect.flatMap(MembershipDeskMemory, (m) => m.join(request))
        const filed = yield* filePatRequest(request, operator)
        const outcomes = yield* Effect.all(Array.from({ length: 5 }, () => Effect.result(approvePatRequest(operator, filed.id, undefined))), { concurrency: "unbounded" })
        const won = outcomes.flatMap((o) => (o._tag === "Success" ? [o.success] : []))
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
