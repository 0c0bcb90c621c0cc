import { expect, layer } from "@effect/vitest"
import { DateTime, Effect, Option, Redacted } from "effect"
import { type SsoConnectionRecord, SsoConnectionRepository } from "../../src/ports/SsoConnectionRepository.js"
import { SsoSignInRepository } from "../../src/ports/SsoSignInRepository.js"
import { adaptersUnderTest, storedTenant, t0 } from "../support/AdaptersUnderTest.js"

const connection = (tenantId: string, overrides: Partial<SsoConnectionRecord> = {}): SsoConnectionRecord => ({
  tenantId,
  issuer: "https://idp.example",
  clientId: "portfolio",
  domains: ["acme.example", "acme.test"],
  defaultRole: "viewer",
  roleClaim: "groups",
  roleMap: [{ value: "EA", role: "architect" }, { value: "Admins", role: "tenant-admin" }],
  required: true,
  breakGlass: ["chief@acme.example"],
  domainsConfirmed: true,
  emailVerifiedClaim: "email_verified",
  secretSetAt: t0,
  updatedAt: t0,
  ...overrides
})

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`SsoConnectionRepository and SsoSignInRepository contract, ${adapters.name}`, (it) => {
    it.effect("keeps one connection per tenant, replaced whole, its secret apart, removed with it", () =>
      Effect.gen(function*() {
        const connections = yield* SsoConnectionRepository
        const tenant = yield* storedTenant("sso-kept")
        expect(yield* connections.find(tenant.id)).toEqual(Option.none())
        yield* connections.save(connection(tenant.id), Redacted.make("first"))
        expect(yield* connections.find(tenant.id)).toEqual(Option.some(connection(tenant.id)))
        const later = DateTime.add(t0, { hours: 1 })
        const replaced = connection(tenant.id, { clientId: "other", roleClaim: null, roleMap: [], required: false, breakGlass: [], secretSetAt: later, updatedAt: later })
        yield* connections.save(replaced, Redacted.make("second"))
        expect(yield* connections.find(tenant.id)).toEqual(Option.some(replaced))
        expect(Option.map(yield* connections.findClientSecret(tenant.id), Redacted.value)).toEqual(Option.some("second"))
        const other = yield* storedTenant("sso-kept-too")
        yield* connections.save(connection(other.id, { domains: ["acme.test"] }), Redacted.make("third"))
        expect([...yield* connections.tenantIdsForDomain("acme.test")].sort()).toEqual([tenant.id, other.id].sort())
        expect(yield* connections.tenantIdsForDomain("acme.example")).toEqual([tenant.id])
        expect(yield* connections.tenantIdsForDomain("example")).toEqual([])
        // Domains no operator vouches for lead nowhere.
        yield* connections.save(connection(other.id, { domains: ["acme.test"], domainsConfirmed: false }), Redacted.make("third"))
        expect(yield* connections.tenantIdsForDomain("acme.test")).toEqual([tenant.id])
        const confirmedAt = DateTime.add(t0, { hours: 2 })
        expect(yield* connections.confirmDomains(other.id, confirmedAt)).toEqual(
          Option.some(connection(other.id, { domains: ["acme.test"], domainsConfirmed: true, updatedAt: confirmedAt }))
        )
        expect(Option.map(yield* connections.findClientSecret(other.id), Redacted.value)).toEqual(Option.some("third"))
        expect([...yield* connections.tenantIdsForDomain("acme.test")].sort()).toEqual([tenant.id, other.id].sort())
        expect(yield* connections.remove(tenant.id)).toBe(true)
        expect(yield* connections.remove(tenant.id)).toBe(false)
        expect(yield* connections.confirmDomains(tenant.id, t0)).toEqual(Option.none())
        expect(yield* connections.find(tenant.id)).toEqual(Option.none())
        expect(yield* connections.findClientSecret(tenant.id)).toEqual(Option.none())
      }))

    it.effect("gives a begun sign-in once, to its tenant only, and never after it expired", () =>
      Effect.gen(function*() {
        const signIns = yield* SsoSignInRepository
        const tenant = yield* storedTenant("sso-state")
        const other = yield* storedTenant("sso-other")
        const pending = { stateHash: "h1", tenantId: tenant.id, nonce: "n1", codeVerifier: "v1", expiresAt: DateTime.add(t0, { minutes: 10 }) }
        yield* signIns.save(pending, t0)
        yield* signIns.save({ ...pending, stateHash: "h2" }, t0)
        expect(yield* signIns.take("h1", other.id, t0)).toEqual(Option.none())
        expect(yield* signIns.take("h1", tenant.id, t0)).toEqual(Option.some(pending))
        expect(yield* signIns.take("h1", tenant.id, t0)).toEqual(Option.none())
        expect(yield* signIns.take("h2", tenant.id, DateTime.add(t0, { minutes: 10 }))).toEqual(Option.none())
        // Saving forgets what expired: h2 is gone even for a clock that went back.
        yield* signIns.save({ ...pending, stateHash: "h3" }, DateTime.add(t0, { minutes: 11 }))
        expect(yield* signIns.take("h2", tenant.id, t0)).toEqual(Option.none())
      }))
  })
}
