import { FreshPgLive } from "@portfolio/platform/testing"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { ScimTokenRepositoryPg } from "../../src/adapters/postgres/ScimTokenRepositoryPg.js"
import { generateScimToken, ScimTokenRecord } from "../../src/domain/ScimToken.js"
import { ScimTokenRepository } from "../../src/ports/ScimTokenRepository.js"
import { ScimTokenRepositoryMemory } from "../support/ScimTokenRepositoryMemory.js"

const at = (iso: string) => DateTime.makeUnsafe(iso)

/** A new token's record, as `createScimToken` would store it, in a tenant of its own unless told. */
const newToken = (overrides: Partial<ConstructorParameters<typeof ScimTokenRecord>[0]> = {}) => {
  const token = generateScimToken()
  return {
    token,
    record: new ScimTokenRecord({
      id: randomUUID(),
      tenantId: randomUUID(),
      label: "Okta",
      tokenHash: token.tokenHash,
      tokenPrefix: token.tokenPrefix,
      createdBy: "operator:ops",
      createdAt: at("2026-07-01T10:00:00.000Z"),
      lastUsedAt: null,
      revokedAt: null,
      ...overrides
    })
  }
}

/** The same cases against the production adapter and the test double the other tests rely on. */
const adapters: ReadonlyArray<{ readonly name: string; readonly store: Layer.Layer<ScimTokenRepository, unknown> }> = [
  {
    name: "ScimTokenRepositoryPg (fresh database)",
    store: Layer.mergeAll(ScimTokenRepositoryPg, MigrationsLive).pipe(Layer.provideMerge(FreshPgLive("it_gw_scim")))
  },
  { name: "ScimTokenRepositoryMemory (test double)", store: ScimTokenRepositoryMemory.layer }
]

describe.each(adapters)("ScimTokenRepository contract: $name", ({ store: storeLayer }) => {
  layer(storeLayer, { timeout: 60_000 })((it) => {
    it.effect("finds a record by its hash as inserted, and nothing for an unknown hash", () =>
      Effect.gen(function*() {
        const store = yield* ScimTokenRepository
        const { record, token } = newToken({ label: "Entra ID — production" })
        yield* store.insert(record)
        expect(Option.getOrThrow(yield* store.findByHash(token.tokenHash))).toEqual(record)
        expect(Option.isNone(yield* store.findByHash(generateScimToken().tokenHash))).toBe(true)
      }))

    it.effect("refuses two tokens with the same hash", () =>
      Effect.gen(function*() {
        const store = yield* ScimTokenRepository
        const { record } = newToken()
        yield* store.insert(record)
        const again = yield* Effect.flip(store.insert(new ScimTokenRecord({ ...record, id: randomUUID() })))
        expect(again._tag).toBe("Unavailable")
      }))

    it.effect("counts a tenant's active tokens only", () =>
      Effect.gen(function*() {
        const store = yield* ScimTokenRepository
        const tenantId = randomUUID()
        expect(yield* store.lockActiveOf(tenantId)).toBe(0)
        yield* store.insert(newToken({ tenantId }).record)
        yield* store.insert(newToken({ tenantId, revokedAt: at("2026-07-02T10:00:00.000Z") }).record)
        yield* store.insert(newToken().record)
        expect(yield* store.lockActiveOf(tenantId)).toBe(1)
        yield* store.insert(newToken({ tenantId }).record)
        expect(yield* store.lockActiveOf(tenantId)).toBe(2)
      }))

    it.effect("lists a tenant's tokens, active first, then revoked, newest first in each, and only its own", () =>
      Effect.gen(function*() {
        const store = yield* ScimTokenRepository
        const tenantId = randomUUID()
        const made = (label: string, createdAt: string, revokedAt: string | null = null) =>
          store.insert(newToken({ tenantId, label, createdAt: at(createdAt), revokedAt: revokedAt === null ? null : at(revokedAt) }).record)
        yield* made("old revoked", "2026-07-01T10:00:00.000Z", "2026-07-05T10:00:00.000Z")
        yield* made("old active", "2026-07-02T10:00:00.000Z")
        yield* made("new revoked", "2026-07-03T10:00:00.000Z", "2026-07-04T10:00:00.000Z")
        yield* made("new active", "2026-07-04T10:00:00.000Z")
        yield* store.insert(newToken({ label: "elsewhere" }).record)
        expect((yield* store.listByTenant(tenantId)).map((r) => r.label)).toEqual(["new active", "old active", "new revoked", "old revoked"])
      }))

    it.effect("revokes a tenant's token once, keeping the first time; none for another tenant's or an unknown id", () =>
      Effect.gen(function*() {
        const store = yield* ScimTokenRepository
        const { record } = newToken()
        yield* store.insert(record)
        expect(Option.isNone(yield* store.revoke(randomUUID(), record.id, at("2026-07-02T10:00:00.000Z")))).toBe(true)
        expect(Option.isNone(yield* store.revoke(record.tenantId, randomUUID(), at("2026-07-02T10:00:00.000Z")))).toBe(true)
        expect(Option.getOrThrow(yield* store.findByHash(record.tokenHash)).revokedAt).toBeNull()

        const first = Option.getOrThrow(yield* store.revoke(record.tenantId, record.id, at("2026-07-02T10:00:00.000Z")))
        expect(first).toEqual({ token: new ScimTokenRecord({ ...record, revokedAt: at("2026-07-02T10:00:00.000Z") }), alreadyRevoked: false })
        const second = Option.getOrThrow(yield* store.revoke(record.tenantId, record.id, at("2026-07-03T10:00:00.000Z")))
        expect(second).toEqual({ token: first.token, alreadyRevoked: true })
        expect(yield* store.lockActiveOf(record.tenantId)).toBe(0)
      }))

    it.effect("marks the last use, never moving it back", () =>
      Effect.gen(function*() {
        const store = yield* ScimTokenRepository
        const { record } = newToken()
        yield* store.insert(record)
        yield* store.markUsed(record.id, at("2026-07-02T10:00:00.000Z"))
        yield* store.markUsed(record.id, at("2026-07-01T12:00:00.000Z"))
        expect(Option.getOrThrow(yield* store.findByHash(record.tokenHash)).lastUsedAt).toEqual(at("2026-07-02T10:00:00.000Z"))
      }))
  })
})
