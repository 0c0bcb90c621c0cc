import { type ArbRole, Invitation, type InvitationStatus } from "@portfolio/domain"
import { DateTime, Duration } from "effect"

/**
 * `invitation`: a tenant-admin invited someone (`POST /tenant/invitations`); it counts toward the
 * tenant's hourly limit. `welcome`: the link mailed to a new tenant's first admin, whose account
 * has no password yet, when an operator creates the tenant; it is not counted, and accepting it
 * only sets the password of the active member it was made for (it never makes a member).
 */
export type InvitationKind = "invitation" | "welcome"

/** An invitation as stored; its status is derived from the timestamps and the clock. */
export interface InvitationRecord {
  readonly id: string
  readonly kind: InvitationKind
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

/**
 * Wrong current passwords an existing account's holder may type through one link: the fifth
 * revokes the invitation. The acceptance page checks the account's password as the console's
 * sign-in does, and must not let a link's holder guess past the console's lockout (5 per e-mail).
 */
export const MaxWrongPasswords = 5

/** EXPIRED is not stored: it is what a PENDING invitation reads as once `expiresAt` has passed. */
export const statusAt = (record: InvitationRecord, now: DateTime.Utc): InvitationStatus => {
  if (record.acceptedAt !== null) return "ACCEPTED"
  if (record.revokedAt !== null) return "REVOKED"
  return DateTime.isLessThan(now, record.expiresAt) ? "PENDING" : "EXPIRED"
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
