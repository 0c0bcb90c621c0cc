import type { ArbRole, SecurityEvent } from "@portfolio/domain"
import { Context, Data, type Effect, type Option, type Redacted } from "effect"
import type { SecurityLogPage } from "@portfolio/platform/security"

export interface Membership {
  readonly tenantId: string
  readonly tenantSlug: string
  readonly role: ArbRole
}

/** A person's account and their active memberships, as provisioning holds them. */
export interface MemberAccount {
  readonly subject: string
  readonly email: string
  readonly memberships: ReadonlyArray<Membership>
  /**
   * When the password was last set (epoch ms), null when provisioning says none: a session opened
   * before it was opened with a password that may no longer be the account's.
   */
  readonly passwordSetAtMs: number | null
  /**
   * The tenants of these memberships whose single sign-on is required, this person being no
   * break-glass account there: a session opened with a password may not act in them.
   */
  readonly ssoOnlyTenantIds: ReadonlyArray<string>
}

/** A service the console calls did not answer, or answered what it should not: nothing was done. */
export class UpstreamUnavailable extends Data.TaggedError("UpstreamUnavailable")<{ readonly reason: string }> {}

/** Where to send the browser to sign in at the tenant's provider, and the state it must bring back. */
export interface ProviderSignInStart {
  readonly authorizationUrl: string
  readonly state: string
}

/** No tenant of that slug, or one without a single sign-on connection: provisioning does not say which to the console. */
export class NoSsoConnection extends Data.TaggedError("NoSsoConnection")<{}> {}

/**
 * Provisioning refused a sign-in through the tenant's provider (the state, the id token, an
 * unverified e-mail, a domain the connection does not allow...): `reason` is its words, for the
 * security log only, since they would tell a stranger which check to work around.
 */
export class ProviderSignInRefused extends Data.TaggedError("ProviderSignInRefused")<{ readonly reason: string }> {}

/** The provider vouched for someone removed from the tenant: only a new invitation brings them back. */
export class RemovedMember extends Data.TaggedError("RemovedMember")<{ readonly reason: string }> {}

/** Accounts and memberships: provisioning's admin API, never its tables. */
export interface DirectoryDeskShape {
  /** The account when the e-mail and password match; none for anything else, alike. */
  readonly checkSignIn: (email: string, password: Redacted.Redacted<string>) => Effect.Effect<Option.Option<MemberAccount>, UpstreamUnavailable>
  readonly account: (subject: string) => Effect.Effect<Option.Option<MemberAccount>, UpstreamUnavailable>
  /** The tenants where the account of this e-mail is a member (none for an unknown e-mail), to file a failed sign-in in their logs. */
  readonly failedSignInTenants: (email: string) => Effect.Effect<ReadonlyArray<string>, UpstreamUnavailable>
  /** The slugs of the workspaces whose provider signs in this e-mail's domain; none for another e-mail. */
  readonly ssoTenantsForEmail: (email: string) => Effect.Effect<ReadonlyArray<string>, UpstreamUnavailable>
  /** The id of the tenant of that slug; none for an unknown slug. */
  readonly tenantIdOf: (slug: string) => Effect.Effect<Option.Option<string>, UpstreamUnavailable>
  /** Begins a sign-in through the tenant's provider: provisioning keeps the state, nonce and PKCE verifier (10 minutes, single use). */
  readonly startSsoSignIn: (slug: string) => Effect.Effect<ProviderSignInStart, NoSsoConnection | UpstreamUnavailable>
  /**
   * Ends it with the URL the browser came back on (the code, the state, the issuer): the person's
   * account and active memberships, a member made in the tenant on their first sign-in.
   */
  readonly completeSsoSignIn: (
    slug: string,
    state: string,
    callbackUrl: string
  ) => Effect.Effect<MemberAccount, NoSsoConnection | ProviderSignInRefused | RemovedMember | UpstreamUnavailable>
  /** What provisioning recorded itself (invitation acceptances, on its own page), newest first. */
  readonly securityEvents: (
    tenantId: string,
    page: SecurityLogPage
  ) => Effect.Effect<ReadonlyArray<SecurityEvent>, UpstreamUnavailable>
}

export class DirectoryDesk extends Context.Service<DirectoryDesk, DirectoryDeskShape>()("@portfolio/console/DirectoryDesk") {}
