import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, type Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { generatePat } from "../../src/domain/Pat.js"
import { PatRecord } from "../../src/domain/PatRecord.js"
import { PatRepository } from "../../src/ports/PatRepository.js"
import { PatRepositoryMemory } from "../support/PatRepositoryMemory.js"
import { at, newRecord, PatRepositoryPgFresh } from "../support/PatRepositories.js"

/** The same cases against the production adapter and the test double the other tests rely on. */
const adapters: ReadonlyArray<{ readonly name: string; readonly store: Layer.Layer<PatRepository, unknown> }> = [
  { name: "PatRepositoryPg (fresh database)", store: PatRepositoryPgFresh("it_gw") },
  { name: "PatRepositoryMemory (test double)", store: PatRepositoryMemory.layer }
]

describe.each(adapters)("PatRepository contract: $name", ({ store: storeLayer }) => {
  layer(storeLayer, { timeout: 60_000 })((it) => {
    it.effect("finds a record by its hash, and nothing for an unknown hash", () =>
      Effect.gen(function*() {
        const store = yield* PatRepository
        const { pat, record } = newRecord()
        yield* store.insert(record)
        expect(Option.getOrThrow(yield* store.findByHash(pat.tokenHash))).toEqual(record)
        expect(Option.isNone(yield* store.findByHash(generatePat().tokenHash))).toBe(true)
      }))

    it.effect("refuses two tokens with the same hash", () =>
      Effect.gen(function*() {
        const store = yield* PatRepository
        const { record } = newRecord()
        yield* store.insert(record)
        const again = yield* Effect.flip(store.insert(new PatRecord({ ...record, id: randomUUID() })))
        expect(again._tag).toBe("Unavailable")
      }))

    it.effect("revokes by id or by hash, keeping the first revocation time", () =>
      Effect.gen(function*() {
        const store = yield* PatRepository
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
        const store = yield* PatRepository
        const holder = { tenantId: "7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", userSub: "auth0|leaver" }
        const before = newRecord({ ...holder, createdAt: at("2026-07-01T00:00:00.000Z") })
        const alreadyRevoked = newRecord({ ...holder, createdAt: at("2026-07-01T00:00:00.000Z"), revokedAt: at("2026-07-01T01:00:00.000Z") })
        const after = newRecord({ ...holder, createdAt: at("2026-07-03T00:00:00.000Z") })
        const otherTenant = newRecord({ ...holder, tenantId: "7c1e2d3f-4a5b-4c6d-8e7f-000000000000", createdAt: at("2026-07-01T00:00:00.000Z") })
        for (const r of [before, alreadyRevoked, after, otherTenant]) yield* store.insert(r.record)
        const revoked = yield* store.revokeHolder(holder, at("2026-07-02T00:00:00.000Z"), at("2026-07-02T00:00:01.000Z"))
        expect(revoked).toEqual([before.record.id])
        const revokedAt = (r: typeof before) => Effect.map(store.findByHash(r.pat.tokenHash), (o) => Option.getOrThrow(o).revokedAt)
        expect(Option.map(Option.fromNullishOr(yield* revokedAt(before)), DateTime.formatIso)).toEqual(Option.some("2026-07-02T00:00:01.000Z"))
        expect(Option.map(Option.fromNullishOr(yield* revokedAt(alreadyRevoked)), DateTime.formatIso)).toEqual(Option.some("2026-07-01T01:00:00.000Z"))
        expect(yield* revokedAt(after)).toBeNull()
        expect(yield* revokedAt(otherTenant)).toBeNull()
      }))

    it.effect("revokes for a holder only that holder's token", () =>
      Effect.gen(function*() {
        const store = yield* PatRepository
        const holder = { tenantId: "3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a", userSub: "auth0|own" }
        const own = newRecord(holder)
        const other = newRecord({ ...holder, userSub: "auth0|other" })
        yield* store.insert(own.record)
        yield* store.insert(other.record)
        expect(Option.isNone(yield* store.revoke({ id: other.record.id }, at("2026-07-02T00:00:00.000Z"), holder))).toBe(true)
        expect(Option.isNone(yield* store.revoke({ tokenHash: other.pat.tokenHash }, at("2026-07-02T00:00:00.000Z"), holder))).toBe(true)
        expect(Option.getOrThrow(yield* store.findByHash(other.pat.tokenHash)).revokedAt).toBeNull()
        const revoked = yield* store.revoke({ tokenHash: own.pat.tokenHash }, at("2026-07-02T00:00:00.000Z"), holder)
        expect(Option.map(revoked, (r) => DateTime.formatIso(r.revokedAt!))).toEqual(Option.some("2026-07-02T00:00:00.000Z"))
      }))

    it.effect("lists a holder's tokens neither revoked nor expired, newest first", () =>
      Effect.gen(function*() {
        const store = yield* PatRepository
        const holder = { tenantId: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", userSub: "auth0|lister" }
        const older = newRecord({ ...holder, createdAt: at("2026-07-01T00:00:00.000Z"), expiresAt: at("2026-08-01T00:00:00.000Z") })
        const newer = newRecord({ ...holder, createdAt: at("2026-07-02T00:00:00.000Z"), expiresAt: at("2026-08-01T00:00:00.000Z") })
        const expired = newRecord({ ...holder, createdAt: at("2026-06-01T00:00:00.000Z"), expiresAt: at("2026-07-10T00:00:00.000Z") })
        const revoked = newRecord({ ...holder, createdAt: at("2026-07-03T00:00:00.000Z"), revokedAt: at("2026-07-04T00:00:00.000Z") })
        const otherTenant = newRecord({ ...holder, tenantId: "5e6f7a8b-9c0d-4e1f-8a2b-000000000000", createdAt: at("2026-07-01T00:00:00.000Z") })
        for (const r of [older, newer, expired, revoked, otherTenant]) yield* store.insert(r.record)
        const listed = yield* store.listActive(holder, at("2026-07-10T00:00:00.000Z"))
        expect(listed).toEqual([newer.record, older.record])
      }))

    it.effect("records the last use, never moving it backwards", () =>
      Effect.gen(function*() {
        const store = yield* PatRepository
        const { pat, record } = newRecord()
        yield* store.insert(record)
        yield* store.markUsed(record.id, at("2026-07-05T12:00:00.000Z"))
        yield* store.markUsed(record.id, at("2026-07-05T11:00:00.000Z"))
        const found = Option.getOrThrow(yield* store.findByHash(pat.tokenHash))
        expect(DateTime.formatIso(found.lastUsedAt!)).toBe("2026-07-05T12:00:00.000Z")
      }))
  })
})
