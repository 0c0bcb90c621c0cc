import type { Scope, Unauthenticated } from "@portfolio/domain"
import { Context, type Effect } from "effect"

/** What a partner's access token grants, as its claims say. */
export interface PartnerAccess {
  readonly clientId: string
  readonly tenantId: string
  readonly scope: Scope
  readonly expiresAtMs: number
}

/**
 * Partner access tokens: signed with the first configured key, verified against all of them,
 * locally (no round trip), the public keys published as a JWK set.
 */
export interface PartnerTokensShape {
  /** A token for `access`, valid `PartnerTokenLifetimeSeconds` from `nowMs`. */
  readonly issue: (access: Omit<PartnerAccess, "expiresAtMs">, nowMs: number) => Effect.Effect<{ readonly token: string; readonly expiresIn: number }>
  readonly verify: (token: string, nowMs: number) => Effect.Effect<PartnerAccess, Unauthenticated>
  /** The public keys, `{"keys": [...]}` with their `kid`, `alg` and `use`. */
  readonly jwks: { readonly keys: ReadonlyArray<Record<string, string>> }
}

export class PartnerTokens extends Context.Service<PartnerTokens, PartnerTokensShape>()("@portfolio/gateway/PartnerTokens") {}

/** Five minutes (the product's lifetime of a client-credentials token). */
export const PartnerTokenLifetimeSeconds = 300
