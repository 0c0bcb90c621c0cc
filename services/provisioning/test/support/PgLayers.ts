import { InternalSecret } from "@portfolio/platform/security"
import { Layer } from "effect"
import { MailArchivePg } from "../../src/adapters/postgres/MailArchivePg.js"
import { MailerPg } from "../../src/adapters/postgres/MailerPg.js"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { IssuerDiscoveryOpenId } from "../../src/adapters/openid/IssuerDiscoveryOpenId.js"
import { SsoRelyingPartyOpenId } from "../../src/adapters/openid/SsoRelyingPartyOpenId.js"
import { type ScryptCost } from "../../src/adapters/postgres/IdentityProviderPg.js"
import { pgAdapters, type PgAdaptersLive } from "../../src/adapters/postgres/PgAdapters.js"
import { ClientSecretSealer } from "../../src/adapters/postgres/SsoConnectionRepositoryPg.js"
import type { ProvisioningSettingsShape } from "../../src/Config.js"
import { FreshPgLive } from "@portfolio/platform/testing"
import { testSettings } from "./Memory.js"
import { testSecret } from "./TestServer.js"

/**
 * scrypt at 128 KiB instead of the service's 128 MiB: a millisecond a derivation where the
 * service's cost takes a second of CPU on a loaded 2-core machine. Postgres.test.ts checks the
 * service's own cost, and that a refusal costs a derivation.
 */
export const TestScryptCost: ScryptCost = { N: 2 ** 10, r: 8, p: 1 }

/**
 * The real adapters on a fresh, migrated database, as main.ts wires them, with scrypt at
 * TestScryptCost unless `adapters` is main.ts's own PgAdaptersLive.
 */
export const PgAdaptersLayer = (settings: Partial<ProvisioningSettingsShape> = {}, adapters: typeof PgAdaptersLive = pgAdapters(TestScryptCost)) =>
  Layer.mergeAll(
    adapters,
    IssuerDiscoveryOpenId,
    SsoRelyingPartyOpenId,
    MailerPg,
    MailArchivePg,
    testSettings(settings)
  ).pipe(
    Layer.provide(Layer.merge(Layer.succeed(InternalSecret, testSecret), ClientSecretSealer.fixed(testSecret))),
    Layer.provideMerge(MigrationsLive),
    Layer.provideMerge(FreshPgLive("it_prov", 20))
  )
