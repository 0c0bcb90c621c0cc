import { ArbRole, Scope, Uuid } from "@portfolio/domain"
import { Schema } from "effect"

/**
 * A personal access token as the gateway keeps it: never the token itself, only its SHA-256 hash
 * and its first 10 characters (the only part that may appear in logs and traces).
 */
export class PatRecord extends Schema.Class<PatRecord>("PatRecord")({
  id: Uuid,
  tokenHash: Schema.Uint8Array,
  tokenPrefix: Schema.String,
  tenantId: Uuid,
  userSub: Schema.String,
  email: Schema.String,
  role: ArbRole,
  scope: Scope,
  createdAt: Schema.DateTimeUtc,
  expiresAt: Schema.DateTimeUtc,
  revokedAt: Schema.NullOr(Schema.DateTimeUtc),
  lastUsedAt: Schema.NullOr(Schema.DateTimeUtc)
}) {}
