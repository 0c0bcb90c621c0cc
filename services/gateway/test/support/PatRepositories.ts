import { FreshPgLive } from "@portfolio/platform/testing"
import { SecurityLogPg } from "@portfolio/platform/security"
import { UnitOfWorkPg } from "@portfolio/platform/sql"
import { DateTime, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { PatRequestRepositoryPg } from "../../src/adapters/postgres/PatRequestRepositoryPg.js"
import { PatRepositoryPg } from "../../src/adapters/postgres/PatRepositoryPg.js"
import { ScimTokenRepositoryPg } from "../../src/adapters/postgres/ScimTokenRepositoryPg.js"
import { generatePat } from "../../src/domain/Pat.js"
import { PatRecord } from "../../src/domain/PatRecord.js"

/** The PostgreSQL adapter on a migrated database of its own, named `<prefix>_<random>`, dropped with the layer. */
export const PatRepositoryPgFresh = (prefix: string) =>
  Layer.mergeAll(PatRepositoryPg, MigrationsLive).pipe(Layer.provideMerge(FreshPgLive(prefix)))

/** The PostgreSQL stores of PATs, requests and SCIM tokens, the security log and their unit of work, on a migrated database of their own. */
export const GatewayStoresPgFresh = (prefix: string) =>
  Layer.mergeAll(PatRepositoryPg, PatRequestRepositoryPg, ScimTokenRepositoryPg, SecurityLogPg("gateway"), UnitOfWorkPg, MigrationsLive).pipe(
    Layer.provideMerge(FreshPgLive(prefix))
  )

export const at = (iso: string) => DateTime.makeUnsafe(iso)

/** A new token and its record, as `createPat` would store it, with the fields a case cares about overridden. */
export const newRecord = (overrides: Partial<ConstructorParameters<typeof PatRecord>[0]> = {}) => {
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
