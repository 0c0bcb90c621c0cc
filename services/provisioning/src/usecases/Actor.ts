import type { CallerIdentity, Member } from "@portfolio/domain"

/**
 * Who changes a tenant's members and invitations, as the security log and the invitation mails
 * name them: a tenant-admin (their token's subject and their member e-mail), or a tenant's SCIM
 * token (`scim:<token id>`, which has no e-mail). The rules are the same whoever acts.
 */
export interface Actor {
  readonly subject: string
  /** The security log's e-mail of the actor; empty for one who has none, whom `subject` then names (`actorLabel`). */
  readonly email: string
  /** Who an invitation says it is from, in its mail and its `invitedByEmail`. */
  readonly inviter: string
}

export const tenantAdminActor = (caller: CallerIdentity, member: Member): Actor => ({
  subject: caller.subject,
  email: member.userEmail,
  inviter: member.userEmail
})

/** What an invitation made through SCIM says it is from: the invitee reads it in the mail's subject and first line. */
const ScimInviter = "SCIM provisioning"

export const scimActor = (caller: CallerIdentity): Actor => ({ subject: caller.subject, email: "", inviter: ScimInviter })
