import { Layer } from "effect"
import { ProvisioningOutboxPg } from "./ProvisioningOutboxPg.js"
import { IdentityProviderPg } from "./IdentityProviderPg.js"
import { InvitationRepositoryPg } from "./InvitationRepositoryPg.js"
import { MemberRepositoryPg } from "./MemberRepositoryPg.js"
import { NotificationLogPg } from "./NotificationLogPg.js"
import { ScimUserRepositoryPg } from "./ScimUserRepositoryPg.js"
import { SsoConnectionRepositoryPg } from "./SsoConnectionRepositoryPg.js"
import { SsoSignInRepositoryPg } from "./SsoSignInRepositoryPg.js"
import { TenantRepositoryPg } from "./TenantRepositoryPg.js"
import { SecurityLogPg } from "@portfolio/platform/security"
import { UnitOfWorkPg } from "@portfolio/platform/sql"

/** Every port provisioning keeps in PostgreSQL, as main.ts serves them and the integration tests use them. */
export const PgAdaptersLive = Layer.mergeAll(
  TenantRepositoryPg,
  SsoConnectionRepositoryPg,
  SsoSignInRepositoryPg,
  MemberRepositoryPg,
  InvitationRepositoryPg,
  ScimUserRepositoryPg,
  IdentityProviderPg,
  ProvisioningOutboxPg,
  NotificationLogPg,
  SecurityLogPg("provisioning"),
  UnitOfWorkPg
)
