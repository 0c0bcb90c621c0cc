import { InternalSecret } from "@portfolio/platform/security"
import { Layer } from "effect"
import { MailArchivePg } from "../../src/adapters/postgres/MailArchivePg.js"
import { MailerPg } from "../../src/adapters/postgres/MailerPg.js"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { IssuerDiscoveryOpenId } from "../../src/adapters/openid/IssuerDiscoveryOpenId.js"
import { SsoRelyingPartyOpenId } from "../../src/adapters/openid/SsoRelyingPartyOpenId.js"
import { PgAdaptersLive } from "../../src/adapters/postgres/PgAdapters.js"
import { ClientSecretSealer } from "../../src/adapters/postgres/SsoConnectionRepositoryPg.js"
import type { ProvisioningSettingsShape } from "../../src/Config.js"
import { FreshPgLive } from "@portfolio/platform/testing"
import { testSettings } from "./Memory.js"
import { testSecret } from "./TestServer.js"

/** The real adapters on a fresh, migrated database, exactly as main.ts wires them. */
export const PgAdaptersLayer = (settings: Partial<ProvisioningSettingsShape> = {}) =>
  Layer.mergeAll(
    PgAdaptersLive,
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
