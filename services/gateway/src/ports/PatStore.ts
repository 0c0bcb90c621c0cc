import { Context, type DateTime, type Effect, type Option, Schema } from "effect"
import type { Unavailable } from "@portfolio/domain/Errors"
import { ArbRole, Scope } from "@portfolio/domain/Role"

/**
 * A personal access token as the gateway keeps it: never the token itself, only its SHA-256 hash
 * and its first 10 characters (the only part that may appear in logs and traces).
 */
export class PatRecord extends Schema.Class<PatRecord>("PatRecord")({
  id: Schema.UUID,
  tokenHash: Schema.Uint8ArrayFromSelf,
  tokenPrefix: Schema.String,
  tenantId: Schema.UUID,
  userSub: Schema.String,
  email: Schema.String,
  role: ArbRole,
  scope: Scope,
  createdAt: Schema.DateTimeUtcFromSelf,
  expiresAt: Schema.DateTimeUtcFromSelf,
  revokedAt: Schema.NullOr(Schema.DateTimeUtcFromSelf),
  lastUsedAt: Schema.NullOr(Schema.DateTimeUtcFromSelf)
}) {}

export type PatSelector = { readonly id: string } | { readonly tokenHash: Uint8Array }

/** Where the gateway keeps its PATs. Failures of the storage itself surface as `Unavailable`. */
export interface PatStoreShape {
  readonly insert: (record: PatRecord) => Effect.Effect<void, Unavailable>
  readonly findByHash: (tokenHash: Uint8Array) => Effect.Effect<Option.Option<PatRecord>, Unavailable>
  /** Marks the token revoked at `at` unless it already is; answers the record as stored afterwards. */
  readonly revoke: (selector: PatSelector, at: DateTime.Utc) => Effect.Effect<Option.Option<PatRecord>, Unavailable>
  readonly markUsed: (id: string, at: DateTime.Utc) => Effect.Effect<void, Unavailable>
  /**
   * Revokes at `at` the unrevoked tokens of one holder in one tenant that were created before
   * `createdBefore` (so that replaying an old removal never touches a token issued afterwards).
   * Answers the ids it revoked.
   */
  readonly revokeHolder: (
    holder: { readonly tenantId: string; readonly userSub: string },
    createdBefore: DateTime.Utc,
    at: DateTime.Utc
  ) => Effect.Effect<ReadonlyArray<string>, Unavailable>
}

export class PatStore extends Context.Tag("@portfolio/gateway/PatStore")<PatStore, PatStoreShape>() {}
