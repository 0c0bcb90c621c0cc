import { FreshPgLive } from "@portfolio/platform/testing"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option } from "effect"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { PartnerClientRepositoryPg } from "../../src/adapters/postgres/PartnerClientRepositoryPg.js"
import { generateClientSecret, PartnerClientRecord } from "../../src/domain/PartnerClient.js"
import { PartnerClientRepository } from "../../src/ports/PartnerClientRepository.js"
import { PartnerClientRepositoryMemory } from "../support/PartnerClientRepositoryMemory.js"

const at = (iso: string) => DateTime.makeUnsafe(iso)
const acme = "0b6f1d3e-8a4c-4f2e-9d1a-5c7e3b2a1f00"
const beta = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"

const client = (name: string, tenantId = acme, createdAt = "2026-07-01T10:00:00.000Z") =>
  new PartnerClientRecord({
    clientId: `service-partner-${name}`,
    tenantId,
    name,
    scope: "read",
    secretHash: generateClientSecret().secretHash,
    previousSecretHash: null,
    previousSecretExpiresAt: null,
    disabledAt: null,
    createdAt: at(createdAt),
    updatedAt: at(createdAt)
  })

/** The same cases against the production adapter and the test double the other tests rely on. */
const adapters: ReadonlyArray<{ readonly name: string; readonly store: Layer.Layer<PartnerClientRepository, unknown> }> = [
  {
    name: "PartnerClientRepositoryPg (fresh database)",
    store: Layer.mergeAll(PartnerClientRepositoryPg, MigrationsLive).pipe(Layer.provideMerge(FreshPgLive("it_gw_partner")))
  },
  { name: "PartnerClientRepositoryMemory (test double)", store: PartnerClientRepositoryMemory.layer }
]

describe.each(adapters)("PartnerClientRepository contract: $name", ({ store: storeLayer }) => {
  layer(storeLayer, { timeout: 60_000 })((it) => {
    it.effect("finds a client by its id as inserted, and nothing for an unknown id", () =>
      Effect.gen(function*() {
        const store = yield* PartnerClientRepository
        const record = client("finder")
        yield* store.insert(record)
        expect(Option.getOrThrow(yield* store.find(record.clientId))).toEqual(record)
        expect(Option.isNone(yield* store.find("service-partner-nobody"))).toBe(true)
      }))

    it.effect("refuses a name taken in the same tenant, and an id taken in any tenant, each with its own error", () =>
      Effect.gen(function*() {
        const store = yield* PartnerClientRepository
        yield* store.insert(client("twice"))
        const sameName = yield* Effect.flip(store.insert(new PartnerClientRecord({ ...client("twice"), clientId: "service-partner-twice-0000aaaa" })))
        expect(sameName._tag).toBe("PartnerNameTaken")
        const sameId = yield* Effect.flip(store.insert(new PartnerClientRecord({ ...client("twice", beta), name: "other" })))
        expect(sameId._tag).toBe("ClientIdTaken")
        // The same name in another tenant, under an id of its own, is another client.
        yield* store.insert(new PartnerClientRecord({ ...client("twice", beta), clientId: "service-partner-twice-0000bbbb" }))
        expect(Option.getOrThrow(yield* store.find("service-partner-twice-0000bbbb")).tenantId).toBe(beta)
      }))

    it.effect("lists a tenant's clients oldest first, and only its own", () =>
      Effect.gen(function*() {
        const store = yield* PartnerClientRepository
        const tenant = "3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b"
        yield* store.insert(client("later", tenant, "2026-07-02T10:00:00.000Z"))
        yield* store.insert(client("earlier", tenant, "2026-07-01T10:00:00.000Z"))
        yield* store.insert(client("elsewhere", beta))
        expect((yield* store.listByTenant(tenant)).map((r) => r.name)).toEqual(["earlier", "later"])
      }))

    it.effect("changes the secret, keeping or dropping the previous one", () =>
      Effect.gen(function*() {
        const store = yield* PartnerClientRepository
        const record = client("rotor")
        yield* store.insert(record)
        const next = generateClientSecret().secretHash
        const kept = Option.getOrThrow(yield* store.changeSecret(record.clientId, {
          secretHash: next,
          previous: { secretHash: record.secretHash, expiresAt: at("2026-07-02T10:00:00.000Z") },
          at: at("2026-07-01T11:00:00.000Z")
        }))
        expect(kept).toMatchObject({ previousSecretExpiresAt: at("2026-07-02T10:00:00.000Z"), updatedAt: at("2026-07-01T11:00:00.000Z") })
        expect(kept.secretHash).toEqual(next)
        expect(kept.previousSecretHash).toEqual(record.secretHash)
        const dropped = Option.getOrThrow(yield* store.changeSecret(record.clientId, { secretHash: record.secretHash, previous: null, at: at("2026-07-01T12:00:00.000Z") }))
        expect(dropped).toMatchObject({ previousSecretHash: null, previousSecretExpiresAt: null })
        expect(Option.getOrThrow(yield* store.find(record.clientId))).toEqual(dropped)
        expect(Option.isNone(yield* store.changeSecret("service-partner-nobody", { secretHash: next, previous: null, at: at("2026-07-01T12:00:00.000Z") }))).toBe(true)
      }))

    it.effect("disables keeping the first time, and enables", () =>
      Effect.gen(function*() {
        const store = yield* PartnerClientRepository
        const record = client("toggle")
        yield* store.insert(record)
        const first = Option.getOrThrow(yield* store.setDisabled(record.clientId, at("2026-07-01T11:00:00.000Z"), at("2026-07-01T11:00:00.000Z")))
        expect(first.disabledAt).toEqual(at("2026-07-01T11:00:00.000Z"))
        const second = Option.getOrThrow(yield* store.setDisabled(record.clientId, at("2026-07-01T12:00:00.000Z"), at("2026-07-01T12:00:00.000Z")))
        expect(second.disabledAt).toEqual(at("2026-07-01T11:00:00.000Z"))
        const enabled = Option.getOrThrow(yield* store.setDisabled(record.clientId, null, at("2026-07-01T13:00:00.000Z")))
        expect(enabled).toMatchObject({ disabledAt: null, updatedAt: at("2026-07-01T13:00:00.000Z") })
        expect(Option.isNone(yield* store.setDisabled("service-partner-nobody", null, at("2026-07-01T13:00:00.000Z")))).toBe(true)
      }))
  })
})
