import { ArbRole, Scope } from "@portfolio/domain"
import { Schema } from "effect"

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
