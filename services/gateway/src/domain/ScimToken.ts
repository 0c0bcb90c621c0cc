import { ScimToken, ScimTokenLabel, ScimTokenLiteralPrefix, Uuid, trusted } from "@portfolio/domain"
import { Schema } from "effect"
import { tokenFormat } from "./TokenFormat.js"

/**
 * A tenant's SCIM token (docs/scim.md): the PAT's format under its own prefix, `ap_scim_`, so that
 * secret scanners tell the kinds apart.
 */
const ScimTokenFormat = tokenFormat(ScimTokenLiteralPrefix)

export const generateScimToken = ScimTokenFormat.generate
export const parseScimToken = ScimTokenFormat.parse

/**
 * Whether a Bearer token claims to be a SCIM token: then it is checked as one (and refused as a
 * malformed SCIM token), never as a PAT.
 */
export const claimsScim = (token: string): boolean => token.startsWith(ScimTokenLiteralPrefix)

/**
 * A SCIM token as the gateway keeps it: never the token itself, only its SHA-256 hash and its
 * first 11 characters (`ap_scim_` and 3 random ones, the only part that may appear in logs and traces).
 * No expiry and no scope: it reads and writes its tenant's SCIM Users until it is revoked.
 */
export class ScimTokenRecord extends Schema.Class<ScimTokenRecord>("ScimTokenRecord")({
  id: Uuid,
  tenantId: Uuid,
  label: ScimTokenLabel,
  tokenHash: Schema.Uint8Array,
  tokenPrefix: Schema.String,
  createdBy: Schema.String,
  createdAt: Schema.DateTimeUtc,
  lastUsedAt: Schema.NullOr(Schema.DateTimeUtc),
  revokedAt: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/** What the admin API shows of a token: never its hash. */
export const scimTokenView = (record: ScimTokenRecord) =>
  trusted(ScimToken, {
    id: record.id,
    tenantId: record.tenantId,
    label: record.label,
    tokenPrefix: record.tokenPrefix,
    createdBy: record.createdBy,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt,
    revokedAt: record.revokedAt
  })
