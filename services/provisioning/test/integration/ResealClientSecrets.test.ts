import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { FreshPgLive } from "@portfolio/platform/testing"
import { DateTime, Effect, Layer, Option, Redacted } from "effect"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { ResealClientSecretsLive } from "../../src/adapters/postgres/ResealClientSecrets.js"
import { ClientSecretSealer, SsoConnectionRepositoryPg } from "../../src/adapters/postgres/SsoConnectionRepositoryPg.js"
import { SsoConnectionRepository } from "../../src/ports/SsoConnectionRepository.js"

const oldSecret = "o".repeat(40)
const newSecret = "n".repeat(40)
const tenantId = "7a0c8d52-4b1e-4c8f-9a55-2f4e1b3c6d70"

const repositoryUnder = (current: string, previous?: string) =>
  SsoConnectionRepositoryPg.pipe(Layer.provide(ClientSecretSealer.fixed(current, previous)))

const secretUnder = (current: string) =>
  Effect.flatMap(SsoConnectionRepository, (connections) => connections.findClientSecret(tenantId)).pipe(
    Effect.map(Option.map(Redacted.value)),
    Effect.provide(repositoryUnder(current))
  )

layer(Layer.provideMerge(MigrationsLive, FreshPgLive("it_prov_reseal", 5)), { timeout: 60_000 })("the client secrets through a rotation of INTERNAL_SECRET", (it) => {
  it.effect("are sealed again under the new secret at start, so that unsetting the previous one loses none", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO provisioning.tenants (id, slug, created_at) VALUES (${tenantId}, 'reseal', now())`
      const now = yield* DateTime.now
      yield* Effect.flatMap(SsoConnectionRepository, (connections) =>
        connections.save({
          tenantId,
          issuer: "https://idp.example",
          clientId: "c",
          domains: ["reseal.example"],
          defaultRole: "viewer",
          roleClaim: null,
          roleMap: [],
          required: false,
          breakGlass: [],
          domainsConfirmed: true,
          emailVerifiedClaim: "email_verified",
          secretSetAt: now,
          updatedAt: now
        }, Redacted.make("the-client-secret"))).pipe(Effect.provide(repositoryUnder(oldSecret)))
      // Before the start with the new secret, only the old one opens it.
      expect(yield* secretUnder(newSecret)).toEqual(Option.none())
      yield* Layer.build(ResealClientSecretsLive.pipe(Layer.provide(ClientSecretSealer.fixed(newSecret, oldSecret)))).pipe(Effect.scoped)
      expect(yield* secretUnder(newSecret)).toEqual(Option.some("the-client-secret"))
      expect(yield* secretUnder(oldSecret)).toEqual(Option.none())
    }))
})
