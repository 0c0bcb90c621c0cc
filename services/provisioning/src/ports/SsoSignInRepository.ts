import { Context, type DateTime, type Effect, type Option } from "effect"

/** A sign-in through a tenant's provider, begun and not yet back: what the callback must match. */
export interface PendingSsoSignIn {
  /** SHA-256 of the `state`: the state itself travels in URLs and a cookie, and is not kept. */
  readonly stateHash: string
  readonly tenantId: string
  readonly nonce: string
  readonly codeVerifier: string
  readonly expiresAt: DateTime.Utc
}

/** Where begun sign-ins wait for their callback, each taken at most once. */
export interface SsoSignInRepositoryShape {
  /** Also forgets the sign-ins that expired before `now`, so that abandoned ones do not pile up. */
  readonly save: (pending: PendingSsoSignIn, now: DateTime.Utc) => Effect.Effect<void>
  /** The tenant's pending sign-in of this state, removed as it is read; none when unknown, taken already or expired. */
  readonly take: (stateHash: string, tenantId: string, now: DateTime.Utc) => Effect.Effect<Option.Option<PendingSsoSignIn>>
}

export class SsoSignInRepository extends Context.Service<
  SsoSignInRepository,
  SsoSignInRepositoryShape
>()("@portfolio/provisioning/SsoSignInRepository") {}
