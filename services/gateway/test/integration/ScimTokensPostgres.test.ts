import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { CreateScimTokenRequest, ScimTokensPerTenantMax } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { AdminCall } from "../../src/domain/OperatorActions.js"
import { createScimToken, revokeScimToken } from "../../src/usecases/ManageScimTokens.js"
import { ScimTokenCacheMemory } from "../../src/adapters/memory/ScimTokenCacheMemory.js"
import { GatewayStoresPgFresh } from "../support/PatRepositories.js"

const operator: AdminCall = { subject: "operator:ops", ip: "127.0.0.1", userAgent: "" }

// What the admin API's tests show on the memory stores, here on the real ones: the migration, and
// PostgreSQL itself keeping a tenant to its two active tokens whatever the concurrency.
describe("SCIM tokens on PostgreSQL (fresh database)", () => {
  layer(Layer.merge(GatewayStoresPgFresh("it_gw_scim_uc"), ScimTokenCacheMemory), { timeout: 60_000 })((it) => {
    it.effect("20 concurrent creations for one tenant keep exactly 2 active tokens; the others are 409 and keep nothing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tenantId = randomUUID()
        const outcomes = yield* Effect.all(
          Array.from({ length: 20 }, (_, i) => Effect.result(createScimToken(tenantId, new CreateScimTokenRequest({ label: `tool ${i}` }), operator))),
          { concurrency: "unbounded" }
        )
        const kept = outcomes.flatMap((o) => (o._tag === "Success" ? [o.success.id] : []))
        expect(kept).toHaveLength(ScimTokensPerTenantMax)
        expect(outcomes.flatMap((o) => (o._tag === "Failure" ? [o.failure._tag] : []))).toEqual(Array(20 - ScimTokensPerTenantMax).fill("Conflict"))
        const rows = yield* sql<{ readonly id: string }>`SELECT id FROM gateway.scim_tokens WHERE tenant_id = ${tenantId}`
        expect(rows.map((r) => r.id).sort()).toEqual([...kept].sort())
        const logged = yield* sql<{ readonly target: string }>`
          SELECT target FROM gateway.security_events WHERE action = 'scim_token_created' AND tenant_id = ${tenantId}`
        expect(logged.map((e) => e.target).sort()).toEqual([...kept].sort())

        // A revoked token makes room for exactly one more.
        yield* revokeScimToken(tenantId, kept[0]!, operator)
        const again = yield* Effect.all(
          Array.from({ length: 5 }, () => Effect.result(createScimToken(tenantId, new CreateScimTokenRequest({ label: "rotation" }), operator))),
          { concurrency: "unbounded" }
        )
        expect(again.filter((o) => o._tag === "Success")).toHaveLength(1)
      }))

    it.effect("the migration holds labels to 1 to 80 characters and hashes to 32 bytes, each once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const made = yield* createScimToken(randomUUID(), new CreateScimTokenRequest({ label: "Okta" }), operator)
        const refused = (statement: Effect.Effect<unknown, unknown>) => Effect.map(Effect.result(statement), (e) => e._tag)
        expect(yield* refused(sql`UPDATE gateway.scim_tokens SET label = '' WHERE id = ${made.id}`)).toBe("Failure")
        expect(yield* refused(sql`UPDATE gateway.scim_tokens SET label = ${"x".repeat(81)} WHERE id = ${made.id}`)).toBe("Failure")
        expect(yield* refused(sql`UPDATE gateway.scim_tokens SET token_hash = '\\x00' WHERE id = ${made.id}`)).toBe("Failure")
        const insertCopy = sql`
          INSERT INTO gateway.scim_tokens (id, tenant_id, label, token_hash, token_prefix, created_by, created_at)
          SELECT ${randomUUID()}, tenant_id, label, token_hash, token_prefix, created_by, created_at FROM gateway.scim_tokens WHERE id = ${made.id}`
        expect(yield* refused(insertCopy)).toBe("Failure")
      }))
  })
})
