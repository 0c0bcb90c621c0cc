import { Context, type Effect } from "effect"

/**
 * Drops from this process's PAT cache every token of one holder in one tenant, whatever its id.
 * The gateway's own port beside `PatCache` (whose `invalidate` takes an id): a replica that learns
 * of a removal after another replica revoked the tokens does not know their ids, yet may still
 * hold them in its cache.
 */
export interface CachedHoldersShape {
  readonly evict: (holder: { readonly tenantId: string; readonly userSub: string }) => Effect.Effect<void>
}

export class CachedHolders extends Context.Service<CachedHolders, CachedHoldersShape>()("@portfolio/gateway/CachedHolders") {}
