import { expect, layer } from "@effect/vitest"
import { Tenant } from "@portfolio/domain"
import { newId } from "@portfolio/platform/ids"
import { Effect, Option } from "effect"
import { TenantRepository } from "../../src/ports/TenantRepository.js"
import { adaptersUnderTest, storedTenant, t0 } from "../support/AdaptersUnderTest.js"

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`TenantRepository contract, ${adapters.name}`, (it) => {
    it.effect("keeps a tenant, found by its slug and by its id; anything else is none", () =>
      Effect.gen(function*() {
        const tenants = yield* TenantRepository
        const tenant = yield* storedTenant("kept")
        expect(yield* tenants.findBySlug("kept")).toEqual(Option.some(tenant))
        expect(yield* tenants.findById(tenant.id)).toEqual(Option.some(tenant))
        expect(yield* tenants.findBySlug("never-stored")).toEqual(Option.none())
        expect(yield* tenants.findById(yield* newId)).toEqual(Option.none())
      }))

    it.effect("refuses a second tenant with the same slug with a Conflict naming it, and keeps the first", () =>
      Effect.gen(function*() {
        const tenants = yield* TenantRepository
        const first = yield* storedTenant("taken")
        const second = new Tenant({ id: yield* newId, slug: "taken", createdAt: t0 })
        expect(yield* Effect.flip(tenants.insert(second))).toMatchObject({
          _tag: "Conflict",
          detail: "A tenant with the slug 'taken' already exists."
        })
        expect(yield* tenants.findBySlug("taken")).toEqual(Option.some(first))
        expect(yield* tenants.findById(second.id)).toEqual(Option.none())
      }))
  })
}
