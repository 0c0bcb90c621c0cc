import { Context, type Effect, type Option } from "effect"
import type { ScimTokenRecord } from "../domain/ScimToken.js"

/**
 * Recently verified SCIM tokens keyed by their hash, as `PatCache` keeps PATs: an identity tool's
 * synchronisation sends bursts of calls, which the store need not see each. Entries live at most
 * one second; revoking drops an entry at once.
 */
export interface ScimTokenCacheShape {
  readonly get: (tokenHash: Uint8Array, nowMs: number) => Effect.Effect<Option.Option<ScimTokenRecord>>
  readonly set: (record: ScimTokenRecord, nowMs: number) => Effect.Effect<void>
  readonly invalidate: (id: string) => Effect.Effect<void>
}

export class ScimTokenCache extends Context.Service<ScimTokenCache, ScimTokenCacheShape>()("@portfolio/gateway/ScimTokenCache") {}
