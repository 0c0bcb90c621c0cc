import { PartnerClient, PartnerClientId, PartnerClientIdPrefix, PartnerName, Scope, Uuid, trusted } from "@portfolio/domain"
import { DateTime, Schema } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { checksumOf, randomBase62, randomOf } from "./TokenFormat.js"

/**
 * A partner client as the gateway keeps it: its secrets only as SHA-256 hashes (a secret is 238
 * random bits: a slow hash would add nothing), the one before the last rotation until its grace
 * ends (docs/product-rules.md#partner-clients).
 */
export class PartnerClientRecord extends Schema.Class<PartnerClientRecord>("PartnerClientRecord")({
  clientId: PartnerClientId,
  tenantId: Uuid,
  name: PartnerName,
  scope: Scope,
  secretHash: Schema.Uint8Array,
  previousSecretHash: Schema.NullOr(Schema.Uint8Array),
  previousSecretExpiresAt: Schema.NullOr(Schema.DateTimeUtc),
  disabledAt: Schema.NullOr(Schema.DateTimeUtc),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
}) {}

/** What the admin API shows of a client: never a hash. */
export const publicView = (record: PartnerClientRecord) =>
  trusted(PartnerClient, {
    clientId: record.clientId,
    tenantId: record.tenantId,
    name: record.name,
    scope: record.scope,
    state: record.disabledAt === null ? "enabled" : "disabled",
    previousSecretExpiresAt: record.previousSecretExpiresAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt
  })

const IdSuffixAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
const IdSuffixLength = 8

/**
 * `service-partner-<name>-<8 random lowercase letters and digits>` (41 bits): the suffix keeps one
 * tenant's names out of every other's namespace, so that no tenant can take a name first or learn
 * that another uses it (docs/security.md, "Partner client ids").
 */
export const newPartnerClientId = (name: string, bytes?: (size: number) => Uint8Array): string =>
  `${PartnerClientIdPrefix}${name}-${randomOf(IdSuffixAlphabet, IdSuffixLength, bytes)}`

const SecretPrefix = "ap_cs_"
const SecretRandomLength = 40

export const hashClientSecret = (secret: string): Uint8Array => createHash("sha256").update(secret, "utf8").digest()

/**
 * `ap_cs_`, 40 random base62 characters and the CRC32 of those in 6 more: the PAT's scheme, so
 * that secret scanners recognise a leaked client secret offline.
 */
export const generateClientSecret = (bytes?: (size: number) => Uint8Array) => {
  const randomPart = randomBase62(SecretRandomLength, bytes)
  const secret = `${SecretPrefix}${randomPart}${checksumOf(randomPart)}`
  return { secret, secretHash: hashClientSecret(secret) }
}

const sameHash = (a: Uint8Array, b: Uint8Array) => a.length === b.length && timingSafeEqual(a, b)

/**
 * Whether `secret` is the client's current secret, or its previous one while the grace lasts.
 * Both hashes are always compared, so that the time taken says nothing of which matched.
 */
export const secretMatches = (record: PartnerClientRecord, secret: string, nowMs: number): boolean => {
  const hash = hashClientSecret(secret)
  const current = sameHash(record.secretHash, hash)
  const previousValid = record.previousSecretHash !== null && record.previousSecretExpiresAt !== null &&
    DateTime.toEpochMillis(record.previousSecretExpiresAt) > nowMs
  const previous = record.previousSecretHash !== null && sameHash(record.previousSecretHash, hash)
  return current || (previousValid && previous)
}
