import type { ArbRole } from "@portfolio/domain"
import { Context, type DateTime, type Effect, type Option, type Redacted } from "effect"

/** A tenant's single sign-on connection as kept: its client secret is only ever read by the sign-in. */
export interface SsoConnectionRecord {
  readonly tenantId: string
  readonly issuer: string
  readonly clientId: string
  readonly domains: ReadonlyArray<string>
  readonly defaultRole: ArbRole
  readonly roleClaim: string | null
  readonly roleMap: ReadonlyArray<{ readonly value: string; readonly role: ArbRole }>
  readonly required: boolean
  /** Tenant-admins who may still sign in with a password when single sign-on is required. */
  readonly breakGlass: ReadonlyArray<string>
  /**
   * Whether an operator vouches for the domains: only then does a work e-mail of them lead to this
   * tenant's provider, since a tenant-admin can name any domain, a mail provider's included.
   */
  readonly domainsConfirmed: boolean
  /** The id token's claim that must be true for the e-mail to count as verified. */
  readonly emailVerifiedClaim: string
  readonly secretSetAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
}

/** Where the tenants' connections are kept, one per tenant, the client secret sealed at rest. */
export interface SsoConnectionRepositoryShape {
  /** Writes the tenant's connection whole, replacing the one it had. */
  readonly save: (record: SsoConnectionRecord, clientSecret: Redacted.Redacted<string>) => Effect.Effect<void>
  readonly find: (tenantId: string) => Effect.Effect<Option.Option<SsoConnectionRecord>>
  /** None when there is no connection, or its secret no longer opens (sealed under a secret the service has lost). */
  readonly findClientSecret: (tenantId: string) => Effect.Effect<Option.Option<Redacted.Redacted<string>>>
  /** The tenants whose connection lists this domain (lower case) among its confirmed domains. */
  readonly tenantIdsForDomain: (domain: string) => Effect.Effect<ReadonlyArray<string>>
  /** Marks the connection's domains as an operator's (`domainsConfirmed`); none when there is no connection. */
  readonly confirmDomains: (tenantId: string, at: DateTime.Utc) => Effect.Effect<Option.Option<SsoConnectionRecord>>
  /** Whether there was one to delete. */
  readonly remove: (tenantId: string) => Effect.Effect<boolean>
}

export class SsoConnectionRepository extends Context.Service<
  SsoConnectionRepository,
  SsoConnectionRepositoryShape
>()("@portfolio/provisioning/SsoConnectionRepository") {}
