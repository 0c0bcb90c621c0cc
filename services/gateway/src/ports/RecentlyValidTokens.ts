import { Context, type Effect } from "effect"

/**
 * Hashes of tokens that the store verified as valid lately. An address over its limit for calls
 * without a valid token gets no token lookups (a forged well-formed token would cost a query each);
 * a token in this set was valid minutes ago, cannot be forged, and is still looked up, so that a
 * colleague's working token behind the same address is not refused with the flood. The gateway's
 * own port: only the admission needs it.
 */
export interface RecentlyValidTokensShape {
  readonly remember: (tokenHash: Uint8Array, nowMs: number) => Effect.Effect<void>
  readonly has: (tokenHash: Uint8Array, nowMs: number) => Effect.Effect<boolean>
}

export class RecentlyValidTokens extends Context.Service<
  RecentlyValidTokens,
  RecentlyValidTokensShape
>()("@portfolio/gateway/RecentlyValidTokens") {}
