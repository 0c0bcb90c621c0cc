import type { Unavailable } from "@portfolio/domain"
import { Context, type DateTime, type Effect, type Option } from "effect"
import type { PatRecord } from "../domain/PatRecord.js"

export type PatSelector = { readonly id: string } | { readonly tokenHash: Uint8Array }

export interface Holder {
  readonly tenantId: string
  readonly userSub: string
}

/** Where the gateway keeps its PATs. Failures of the storage itself surface as `Unavailable`. */
export interface PatRepositoryShape {
  readonly insert: (record: PatRecord) => Effect.Effect<void, Unavailable>
  readonly findByHash: (tokenHash: Uint8Array) => Effect.Effect<Option.Option<PatRecord>, Unavailable>
  /**
   * Marks the token revoked at `at` unless it already is; answers the record as stored afterwards.
   * With `holder`, only a token of that holder is touched (another's answers none).
   */
  readonly revoke: (selector: PatSelector, at: DateTime.Utc, holder?: Holder) => Effect.Effect<Option.Option<PatRecord>, Unavailable>
  /** A holder's tokens neither revoked nor expired at `now`, newest first. */
  readonly listActive: (holder: Holder, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<PatRecord>, Unavailable>
  readonly markUsed: (id: string, at: DateTime.Utc) => Effect.Effect<void, Unavailable>
  /**
   * Revokes at `at` the unrevoked tokens of one holder in one tenant that were created before
   * `createdBefore` (so that replaying an old removal never touches a token issued afterwards).
   * Answers the ids it revoked.
   */
  readonly revokeHolder: (
    holder: Holder,
    createdBefore: DateTime.Utc,
    at: DateTime.Utc
  ) => Effect.Effect<ReadonlyArray<string>, Unavailable>
}

export class PatRepository extends Context.Service<PatRepository, PatRepositoryShape>()("@portfolio/gateway/PatRepository") {}
