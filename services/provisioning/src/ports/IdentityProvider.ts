import { Context, Data, type DateTime, type Effect, type Option, type Redacted } from "effect"

export interface Account {
  /** Stable identifier of the person, the `userSub` of their memberships in every tenant. */
  readonly subject: string
  readonly email: string
  /** Whether a password was ever set: the person can sign in with the account. */
  readonly hasPassword: boolean
  /**
   * When the password was last set; null while there is none. A console session opened before it
   * was opened with a password that may no longer be the account's, and ends.
   */
  readonly passwordSetAt: DateTime.Utc | null
}

/**
 * The identity provider could not be reached or did not answer (a remote one, such as Keycloak,
 * being down). Nothing was changed there; the caller may retry later. `reason` is for the log only.
 */
export class IdentityProviderUnavailable extends Data.TaggedError("IdentityProviderUnavailable")<{ readonly reason: string }> {}

/**
 * The identity provider holding people's global accounts (the built-in one, or Keycloak or any
 * OIDC provider behind another adapter). Memberships are provisioning's business, not its.
 */
export interface IdentityProviderShape {
  /**
   * The account of this e-mail (compared case-insensitively), created without a password when
   * there is none yet. Its subject never changes afterwards.
   */
  readonly ensureAccount: (email: string) => Effect.Effect<Account, IdentityProviderUnavailable>
  /** Replaces the account's password and records when (`passwordSetAt`). */
  readonly setPassword: (subject: string, password: Redacted.Redacted<string>) => Effect.Effect<void, IdentityProviderUnavailable>
  /**
   * The account of this e-mail (compared case-insensitively) when its password is this one; none
   * otherwise. An unknown e-mail, an account without a password and a wrong password take the
   * same time, so that the time of the answer does not tell them apart either.
   */
  readonly verifyPassword: (email: string, password: Redacted.Redacted<string>) => Effect.Effect<Option.Option<Account>, IdentityProviderUnavailable>
  readonly findAccount: (subject: string) => Effect.Effect<Option.Option<Account>, IdentityProviderUnavailable>
  /** The account of this e-mail (compared case-insensitively), never created; none when there is none. */
  readonly findAccountByEmail: (email: string) => Effect.Effect<Option.Option<Account>, IdentityProviderUnavailable>
}

export class IdentityProvider extends Context.Service<
  IdentityProvider,
  IdentityProviderShape
>()("@portfolio/provisioning/IdentityProvider") {}
