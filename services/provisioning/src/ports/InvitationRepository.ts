import type { ArbRole } from "@portfolio/domain"
import { Context, Data, type DateTime, type Effect, type Option } from "effect"
import type { KeysetRequest } from "@portfolio/platform/http"
import type { InvitationRecord } from "../domain/InvitationRecord.js"

/** The storage's own guarantee that one e-mail has at most one PENDING invitation per tenant. */
export class PendingInvitationExists extends Data.TaggedError("PendingInvitationExists")<{}> {}

export interface RecentInvitations {
  readonly count: number
  /** Creation time of the oldest invitation counted, when there is one. */
  readonly oldest: Option.Option<DateTime.Utc>
}

/** Where an invitation stands in the list: its sort key. */
export interface InvitationPosition {
  readonly createdAt: DateTime.Utc
  readonly id: string
}

export interface InvitationRepositoryShape {
  /**
   * Stores a new PENDING invitation with the SHA-256 hash of its magic-link token. Invitations of
   * that e-mail that expired before `record.createdAt` stop blocking it. Fails with
   * `PendingInvitationExists` when a PENDING, unexpired invitation for the e-mail (compared
   * case-insensitively) exists in the tenant, however many callers race.
   */
  readonly insert: (record: InvitationRecord, tokenHash: string) => Effect.Effect<void, PendingInvitationExists>
  /**
   * Invitations of kind `invitation` of the tenant created after `since` (a `welcome` is not
   * counted). Inside a unit of work it also holds back concurrent creations in the tenant until the
   * work ends, so that concurrent callers count each other.
   */
  readonly countCreatedSince: (tenantId: string, since: DateTime.Utc) => Effect.Effect<RecentInvitations>
  /**
   * Whether the e-mail (compared case-insensitively) has a PENDING invitation in the tenant that is
   * still unexpired at `at`. A plain read: it never waits on a creation under way in the tenant.
   */
  readonly hasPending: (tenantId: string, email: string, at: DateTime.Utc) => Effect.Effect<boolean>
  /**
   * All invitations of the tenant, whatever their kind, newest first (`createdAt`, then id, both descending); with
   * `page`, the first `page.limit` of those after `page.after` in that order.
   */
  readonly list: (tenantId: string, page?: KeysetRequest<InvitationPosition>) => Effect.Effect<ReadonlyArray<InvitationRecord>>
  readonly findById: (tenantId: string, id: string) => Effect.Effect<Option.Option<InvitationRecord>>
  /** Inside a unit of work, also holds the invitation until the work ends (single use of a link). */
  readonly findByTokenHash: (tokenHash: string) => Effect.Effect<Option.Option<InvitationRecord>>
  /** Sets `revokedAt` if the invitation is neither accepted nor revoked; false otherwise. */
  readonly markRevoked: (id: string, at: DateTime.Utc) => Effect.Effect<boolean>
  /** Sets the role the tenant's invitation grants if it is neither accepted nor revoked; false otherwise (another tenant's included). */
  readonly changeRole: (tenantId: string, id: string, role: ArbRole) => Effect.Effect<boolean>
  /** Sets `acceptedAt` if the invitation is neither accepted nor revoked; false otherwise. */
  readonly markAccepted: (id: string, at: DateTime.Utc) => Effect.Effect<boolean>
  /**
   * Counts one more wrong current password typed through the invitation's link; answers how many
   * so far (0 for an unknown id). Kept as soon as the enclosing unit of work commits, which the
   * refused acceptance lets happen.
   */
  readonly recordWrongPassword: (id: string) => Effect.Effect<number>
}

export class InvitationRepository extends Context.Service<
  InvitationRepository,
  InvitationRepositoryShape
>()("@portfolio/provisioning/InvitationRepository") {}
