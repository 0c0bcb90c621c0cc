import { type ArbRole, Invitation, type InvitationStatus } from "@portfolio/domain"
import { DateTime, Duration } from "effect"

/** An invitation as stored; its status is derived from the timestamps and the clock. */
export interface InvitationRecord {
  readonly id: string
  readonly tenantId: string
  readonly email: string
  readonly arbRole: ArbRole
  readonly invitedByEmail: string
  readonly createdAt: DateTime.Utc
  readonly expiresAt: DateTime.Utc
  readonly acceptedAt: DateTime.Utc | null
  readonly revokedAt: DateTime.Utc | null
}

/** The magic link's lifetime, and so an invitation's: `expiresAt` is `createdAt` plus exactly this. */
export const InvitationLifetime = Duration.hours(7 * 24)

/** EXPIRED is not stored: it is what a PENDING invitation reads as once `expiresAt` has passed. */
export const statusAt = (record: InvitationRecord, now: DateTime.Utc): InvitationStatus => {
  if (record.acceptedAt !== null) return "ACCEPTED"
  if (record.revokedAt !== null) return "REVOKED"
  return DateTime.lessThan(now, record.expiresAt) ? "PENDING" : "EXPIRED"
}

export const toInvitation = (record: InvitationRecord, now: DateTime.Utc) =>
  new Invitation({
    id: record.id,
    email: record.email,
    arbRole: record.arbRole,
    status: statusAt(record, now),
    invitedByEmail: record.invitedByEmail,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    acceptedAt: record.acceptedAt,
    revokedAt: record.revokedAt
  })
