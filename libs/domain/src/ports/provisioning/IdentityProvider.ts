import { Context, type Effect, type Redacted } from "effect"

export interface Account {
  /** Stable identifier of the person, the `userSub` of their memberships in every tenant. */
  readonly subject: string
  readonly email: string
}

/**
 * The identity provider holding people's global accounts (the built-in one, or Keycloak or any
 * OIDC provider behind another adapter). Memberships are provisioning's business, not its.
 */
export interface IdentityProviderShape {
  /**
   * The account of this e-mail (compared case-insensitively), created without a password when
   * there is none yet. Its subject never changes afterwards.
   */
  readonly ensureAccount: (email: string) => Effect.Effect<Account>
  readonly setPassword: (subject: string, password: Redacted.Redacted<string>) => Effect.Effect<void>
}

export class IdentityProvider extends Context.Tag("@portfolio/domain/ports/provisioning/IdentityProvider")<
  IdentityProvider,
  IdentityProviderShape
>() {}
