import type { Unavailable } from "@portfolio/domain"
import { Context, type DateTime, type Effect, type Option } from "effect"
import type { ScimTokenRecord } from "../domain/ScimToken.js"

/** A revocation as stored: the token afterwards, and whether it was revoked already before. */
export interface ScimTokenRevocation {
  readonly token: ScimTokenRecord
  readonly alreadyRevoked: boolean
}

/** Where the gateway keeps its SCIM tokens. Failures of the storage itself surface as `Unavailable`. */
export interface ScimTokenRepositoryShape {
  readonly insert: (record: ScimTokenRecord) => Effect.Effect<void, Unavailable>
  /**
   * How many of the tenant's tokens are active (not revoked), the tenant's creations held until the
   * enclosing unit of work ends: a concurrent call for the same tenant waits for that unit to commit
   * or roll back, then counts what it stored. Inside a unit of work, a count and the insert that
   * follows it are therefore never interleaved with another creation for the tenant.
   */
  readonly lockActiveOf: (tenantId: string) => Effect.Effect<number, Unavailable>
  readonly findByHash: (tokenHash: Uint8Array) => Effect.Effect<Option.Option<ScimTokenRecord>, Unavailable>
  /** A tenant's tokens: the active ones first, then the revoked ones, newest first in each. */
  readonly listByTenant: (tenantId: string) => Effect.Effect<ReadonlyArray<ScimTokenRecord>, Unavailable>
  /**
   * Marks the tenant's token revoked at `at` unless it already is, and answers it as stored
   * afterwards; none for an unknown id or another tenant's.
   */
  readonly revoke: (tenantId: string, id: string, at: DateTime.Utc) => Effect.Effect<Option.Option<ScimTokenRevocation>, Unavailable>
  readonly markUsed: (id: string, at: DateTime.Utc) => Effect.Effect<void, Unavailable>
}

export class ScimTokenRepository extends Context.Service<ScimTokenRepository, ScimTokenRepositoryShape>()("@portfolio/gateway/ScimTokenRepository") {}
