import { Context, type Effect, type Option } from "effect"
import type { PatRecord } from "../domain/PatRecord.js"

/**
 * Recently verified PATs keyed by their hash, so that the hot path rarely touches the store.
 * Entries live at most one second; revoking drops an entry at once.
 */
export interface PatCacheShape {
  readonly get: (tokenHash: Uint8Array, nowMs: number) => Effect.Effect<Option.Option<PatRecord>>
  readonly set: (record: PatRecord, nowMs: number) => Effect.Effect<void>
  readonly invalidate: (id: string) => Effect.Effect<void>
}

export class PatCache extends Context.Service<PatCache, PatCacheShape>()("@portfolio/gateway/PatCache") {}
