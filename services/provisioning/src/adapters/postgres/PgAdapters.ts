import { Layer } from "effect"
import { ProvisioningOutboxPg } from "./ProvisioningOutboxPg.js"
import { identityProviderPg, OwaspScryptCost, type ScryptCost } from "./IdentityProviderPg.js"
import { InvitationRepositoryPg } from "./InvitationRepositoryPg.js"
import { MemberRepositoryPg } from "./MemberRepositoryPg.js"
import { NotificationLogPg } from "./NotificationLogPg.js"
import { ScimUserRepositoryPg } from "./ScimUserRepositoryPg.js"
import { SsoConnectionRepositoryPg } from "./SsoConnectionRepositoryPg.js"
import { SsoSignInRepositoryPg } from "./SsoSignInRepositoryPg.js"
import { TenantRepositoryPg } from "./TenantRepositoryPg.js"
import { SecurityLogPg } from "@portfolio/platform/security"
import { UnitOfWorkPg } from "@portfolio/platform/sql"

/**
 * Every port provisioning keeps in PostgreSQL, as main.ts serves them (PgAdaptersLive) and the
 * integration tests use them, with passwords hashed at `cost`.
 */
export const pgAdapters = (cost: ScryptCost) => Layer.mergeAll(
  TenantRepositoryPg,
  SsoConnectionRepositoryPg,
  SsoSignInRepositoryPg,
  MemberRepositoryPg,
  InvitationRepositoryPg,
  ScimUserRepositoryPg,
  identityProviderPg(cost),
  ProvisioningOutboxPg,
  NotificationLogPg,
  SecurityLogPg("provisioning"),
  UnitOfWorkPg
)

export const PgAdaptersLive = pgAdapters(OwaspScryptCost)
