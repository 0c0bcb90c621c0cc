import { Layer } from "effect"
import { EventOutboxPg } from "./EventOutboxPg.js"
import { IdentityProviderPg } from "./IdentityProviderPg.js"
import { InvitationRepositoryPg } from "./InvitationRepositoryPg.js"
import { MemberRepositoryPg } from "./MemberRepositoryPg.js"
import { NotificationLogPg } from "./NotificationLogPg.js"
import { TenantRepositoryPg } from "./TenantRepositoryPg.js"
import { securityLogPg, UnitOfWorkPg } from "@portfolio/platform"

/** Every port provisioning keeps in PostgreSQL, as main.ts serves them and the integration tests use them. */
export const PostgresAdapters = Layer.mergeAll(
  TenantRepositoryPg,
  MemberRepositoryPg,
  InvitationRepositoryPg,
  IdentityProviderPg,
  EventOutboxPg,
  NotificationLogPg,
  securityLogPg("provisioning"),
  UnitOfWorkPg
)
