import { InternalSecret } from "@portfolio/platform"
import { Layer } from "effect"
import { LocalMailArchive, LocalMailer } from "../../src/adapters/mail/LocalMailer.js"
import { ProvisioningMigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { PostgresAdapters } from "../../src/adapters/postgres/PostgresAdapters.js"
import type { ProvisioningSettingsShape } from "../../src/Config.js"
import { FreshPgLive } from "@portfolio/platform/testing/FreshDatabase"
import { testSettings } from "./Memory.js"
import { testSecret } from "./TestServer.js"

/** The real adapters on a fresh, migrated database, exactly as main.ts wires them. */
export const PgAdaptersLayer = (settings: Partial<ProvisioningSettingsShape> = {}) =>
  Layer.mergeAll(
    PostgresAdapters,
    LocalMailer,
    LocalMailArchive,
    testSettings(settings)
  ).pipe(
    Layer.provide(Layer.succeed(InternalSecret, testSecret)),
    Layer.provideMerge(ProvisioningMigrationsLive),
    Layer.provideMerge(FreshPgLive("it_prov", 20))
  )
