import { Context, Data, type Effect, type Redacted } from "effect"

/** The client of a tenant's provider: what the connection says, with its secret opened. */
export interface SsoClient {
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly redirectUri: string
  /** Only where the settings allow plain http on loopback, as for the connection's issuer. */
  readonly allowHttp: boolean
  /** The connection's role claim: also asked for as a scope where the provider offers one of its name (Okta's `groups`). */
  readonly roleClaim: string | null
}

/** The provider could not be reached, or answered nothing usable: the sign-in may be tried again later. */
export class ProviderUnreachable extends Data.TaggedError("ProviderUnreachable")<{ readonly reason: string }> {}

/** The callback or the tokens failed a check: no one is signed in. `reason` is for the security log. */
export class SsoCheckFailed extends Data.TaggedError("SsoCheckFailed")<{ readonly reason: string }> {}

/** What a checked id token says of the person. */
export interface SsoIdentity {
  readonly subject: string
  readonly email: string | undefined
  /** Every claim of the id token, for the connection's role claim. */
  readonly claims: Readonly<Record<string, unknown>>
}

/** The authorization code flow with PKCE, state and nonce against a tenant's OpenID Provider. */
export interface SsoRelyingPartyShape {
  readonly begin: (client: SsoClient) => Effect.Effect<
    { readonly authorizationUrl: string; readonly state: string; readonly nonce: string; readonly codeVerifier: string },
    ProviderUnreachable
  >
  /**
   * Exchanges the callback's code (with the verifier) and checks the id token: the provider's
   * signature with an asymmetric key of its JWKS, issuer, audience, expiry with a small skew, the
   * nonce; the callback's `state` and `iss` too.
   */
  readonly finish: (
    client: SsoClient,
    callbackUrl: URL,
    expected: { readonly state: string; readonly nonce: string; readonly codeVerifier: string }
  ) => Effect.Effect<SsoIdentity, SsoCheckFailed | ProviderUnreachable>
}

export class SsoRelyingParty extends Context.Service<SsoRelyingParty, SsoRelyingPartyShape>()("@portfolio/provisioning/SsoRelyingParty") {}
