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
}

/** A service the console calls did not answer, or answered what it should not: nothing was done. */
export class UpstreamUnavailable extends Data.TaggedError("UpstreamUnavailable")<{ readonly reason: string }> {}

/** Accounts and memberships: provisioning's admin API, never its tables. */
export interface DirectoryDeskShape {
  /** The account when the e-mail and password match; none for anything else, alike. */
  readonly checkSignIn: (email: string, password: Redacted.Redacted<string>) => Effect.Effect<Option.Option<MemberAccount>, UpstreamUnavailable>
  readonly account: (subject: string) => Effect.Effect<Option.Option<MemberAccount>, UpstreamUnavailable>
  /** The tenants where the account of this e-mail is a member (none for an unknown e-mail), to file a failed sign-in in their logs. */
  readonly failedSignInTenants: (email: string) => Effect.Effect<ReadonlyArray<string>, UpstreamUnavailable>
  /** What provisioning recorded itself (invitation acceptances, on its own page), newest first. */
  readonly securityEvents: (
    tenantId: string,
    page: SecurityLogPage
  ) => Effect.Effect<ReadonlyArray<SecurityEvent>, UpstreamUnavailable>
}

export class DirectoryDesk extends Context.Tag("@portfolio/console/DirectoryDesk")<DirectoryDesk, DirectoryDeskShape>() {}
