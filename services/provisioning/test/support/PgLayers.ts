import { Layer } from "effect"
import { LocalMailArchive, LocalMailer } from "../../src/mail/LocalMailer.js"
import { EventOutboxPg } from "../../src/postgres/EventOutboxPg.js"
import { IdentityProviderPg } from "../../src/postgres/IdentityProviderPg.js"
import { InvitationRepositoryPg } from "../../src/postgres/InvitationRepositoryPg.js"
import { MemberRepositoryPg } from "../../src/postgres/MemberRepositoryPg.js"
import { ProvisioningMigrationsLive } from "../../src/postgres/Migrations.js"
import { TenantRepositoryPg } from "../../src/postgres/TenantRepositoryPg.js"
import { UnitOfWorkPg } from "../../src/postgres/UnitOfWorkPg.js"
import type { ProvisioningSettingsShape } from "../../src/Settings.js"
import { FreshPgLive } from "@portfolio/platform/testing/FreshDatabase"
import { testSettings } from "./Memory.js"

/** The real adapters on a fresh, migrated database, exactly as main.ts wires them. */
export const PgAdaptersLayer = (settings: Partial<ProvisioningSettingsShape> = {}) =>
  Layer.mergeAll(
    TenantRepositoryPg,
    MemberRepositoryPg,
    InvitationRepositoryPg,
    IdentityProviderPg,
    EventOutboxPg,
    UnitOfWorkPg,
    LocalMailer,
    LocalMailArchive,
    testSettings(settings)
  ).pipe(Layer.provideMerge(ProvisioningMigrationsLive), Layer.provideMerge(FreshPgLive("it_prov", 20)))
