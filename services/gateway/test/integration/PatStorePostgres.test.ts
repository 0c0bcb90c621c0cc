import { SqlClient } from "@effect/sql"
import { PatRecord, PatStore } from "../../src/ports/PatStore.js"
import { migrationsLayer } from "@portfolio/platform"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { gatewayMigrations, GatewaySchema } from "../../src/adapters/postgres/migrations.js"
import { PatStorePostgresLive } from "../../src/adapters/postgres/PatStorePostgres.js"
import { generatePat } from "../../src/domain/Pat.js"
import { FreshPgLive } from "@portfolio/platform/testing/FreshDatabase"

const StoreLive = Layer.mergeAll(PatStorePostgresLive, migrationsLayer(GatewaySchema, gatewayMigrations)).pipe(
  Layer.provideMerge(FreshPgLive("it_gw"))
)

const at = (iso: string) => DateTime.unsafeMake(iso)

const newRecord = (overrides: Partial<ConstructorParameters<typeof PatRecord>[0]> = {}) => {
  const pat = generatePat()
  return {
    pat,
    record: new PatRecord({
      id: randomUUID(),
      tokenHash: pat.tokenHash,
      tokenPrefix: pat.tokenPrefix,
      tenantId: "0b6f1d3e-8a4c-4f2e-9d1a-5c7e3b2a1f00",
      userSub: "auth0|jane",
      email: "jane@example.com",
      role: "tenant-admin",
      scope: "write",
      createdAt: at("2026-07-01T10:00:00.000Z"),
      expiresAt: at("2026-09-29T10:00:00.000Z"),
      revokedAt: null,
      lastUsedAt: null,
      ...overrides
    })
  }
}

describe("PatStorePostgres (fresh database)", () => {
  layer(StoreLive, { timeout: 60_000 })((it) => {
    it.effect("stores only the hash and prefix, and finds the record by hash", () =>
      Effect.gen(function*() {
        const store = yield* PatStore
        const sql = yield* SqlClient.SqlClient
        const { pat, record } = newRecord()
        yield* store.insert(record)
        const found = yield* store.findByHash(pat.tokenHash)
        expect(Option.getOrThrow(found)).toEqual(record)
        const rows = yield* sql<{ readonly row: string }>`SELECT row_to_json(t)::text AS row FROM gateway.personal_access_tokens t WHERE id = ${record.id}`
        expect(rows[0]!.row).not.toContain(pat.token.slice(10))
        expect(rows[0]!.row).toContain(`"token_prefix":"${pat.token.slice(0, 10)}"`)
        expect(Option.isNone(yield* store.findByHash(generatePat().tokenHash))).toBe(true)
      }))

    it.effect("refuses two tokens with the same hash", () =>
      Effect.gen(function*() {
        const store = yield* PatStore
        const { record } = newRecord()
        yield* store.insert(record)
        const again = yield* Effect.flip(store.insert(new PatRecord({ ...record, id: randomUUID() })))
        expect(again._tag).toBe("Unavailable")
      }))

    it.effect("revokes by id or by hash, keeping the first revocation time", () =>
      Effect.gen(function*() {
        const store = yield* PatStore
        const a = newRecord()
        const b = newRecord()
        yield* store.insert(a.record)
        yield* store.insert(b.record)
        const first = yield* store.revoke({ id: a.record.id }, at("2026-07-02T00:00:00.000Z"))
        expect(Option.map(first, (r) => DateTime.formatIso(r.revokedAt!))).toEqual(Option.some("2026-07-02T00:00:00.000Z"))
        const second = yield* store.revoke({ tokenHash: a.pat.tokenHash }, at("2026-07-03T00:00:00.000Z"))
        expect(Option.map(second, (r) => DateTime.formatIso(r.revokedAt!))).toEqual(Option.some("2026-07-02T00:00:00.000Z"))
        const byHash = yield* store.revoke({ tokenHash: b.pat.tokenHash }, at("2026-07-04T00:00:00.000Z"))
        expect(Option.map(byHash, (r) => r.id)).toEqual(Option.some(b.record.id))
        expect(Option.isNone(yield* store.revoke({ id: randomUUID() }, at("2026-07-04T00:00:00.000Z")))).toBe(true)
      }))

    it.effect("revokes a holder's unrevoked tokens in one tenant issued before a given time", () =>
      Effect.gen(function*() {
        const store = yield* PatStore
        const holder = { tenantId: "7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", userSub: "auth0|leaver" }
        const before = newRecord({ ...holder, createdAt: at("2026-07-01T00:00:00.000Z") })
        const alreadyRevoked = newRecord({ ...holder, createdAt: at("2026-07-01T00:00:00.000Z"), revokedAt: at("2026-07-01T01:00:00.000Z") })
        const after = newRecord({ ...holder, createdAt: at("2026-07-03T00:00:00.000Z") })
        const otherTenant = newRecord({ ...holder, tenantId: "7c1e2d3f-4a5b-4c6d-8e7f-000000000000", createdAt: at("2026-07-01T00:00:00.000Z") })
        for (const r of [before, alreadyRevoked, after, otherTenant]) yield* store.insert(r.record)
        const revoked = yield* store.revokeHolder(holder, at("2026-07-02T00:00:00.000Z"), at("2026-07-02T00:00:01.000Z"))
        expect(revoked).toEqual([before.record.id])
        const revokedAt = (r: typeof before) => Effect.map(store.findByHash(r.pat.tokenHash), (o) => Option.getOrThrow(o).revokedAt)
        expect(Option.map(Option.fromNullable(yield* revokedAt(before)), DateTime.formatIso)).toEqual(Option.some("2026-07-02T00:00:01.000Z"))
        expect(Option.map(Option.fromNullable(yield* revokedAt(alreadyRevoked)), DateTime.formatIso)).toEqual(Option.some("2026-07-01T01:00:00.000Z"))
        expect(yield* revokedAt(after)).toBeNull()
        expect(yield* revokedAt(otherTenant)).toBeNull()
      }))

    it.effect("records the last use, never moving it backwards", () =>
      Effect.gen(function*() {
        const store = yield* PatStore
        const { pat, record } = newRecord()
        yield* store.insert(record)
        yield* store.markUsed(record.id, at("2026-07-05T12:00:00.000Z"))
        yield* store.markUsed(record.id, at("2026-07-05T11:00:00.000Z"))
        const found = Option.getOrThrow(yield* store.findByHash(pat.tokenHash))
        expect(DateTime.formatIso(found.lastUsedAt!)).toBe("2026-07-05T12:00:00.000Z")
      }))
  })
})
