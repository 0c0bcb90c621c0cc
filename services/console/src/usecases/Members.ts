import { Effect } from "effect"
import type { Membership } from "../ports/DirectoryDesk.js"
import { MemberDesk } from "../ports/MemberDesk.js"
import { actorOf, type Member, recordSecurityEvent } from "./SignIn.js"

/**
 * The members page's use cases (docs/product-rules.md#invitations-and-members): provisioning
 * applies every rule (tenant-admin only, the hourly limit, the last admin) to the member named;
 * the console records what was done.
 */
const logAs = (member: Member, membership: Membership, action: "member_invited" | "invitation_revoked" | "member_removed", target: string, detail: Readonly<Record<string, string>> = {}) =>
  recordSecurityEvent({ tenantIds: [membership.tenantId], actorSub: member.account.subject, actorEmail: member.account.email, action, target, detail })

export const membersAndInvitations = (member: Member, membership: Membership) =>
  Effect.gen(function*() {
    const desk = yield* MemberDesk
    const actor = actorOf(member, membership)
    const [members, invitations] = yield* Effect.all([desk.members(actor), desk.invitations(actor)], { concurrency: 2 })
    return { members, invitations }
  })

export const invite = (member: Member, membership: Membership, email: string, arbRole: string) =>
  Effect.gen(function*() {
    const invitation = yield* (yield* MemberDesk).invite(actorOf(member, membership), email, arbRole)
    yield* logAs(member, membership, "member_invited", invitation.id, { email: invitation.email, role: invitation.arbRole })
    return invitation
  })

export const revokeInvitation = (member: Member, membership: Membership, invitationId: string) =>
  Effect.gen(function*() {
    yield* (yield* MemberDesk).revokeInvitation(actorOf(member, membership), invitationId)
    yield* logAs(member, membership, "invitation_revoked", invitationId)
  })

export const removeMember = (member: Member, membership: Membership, userSub: string) =>
  Effect.gen(function*() {
    yield* (yield* MemberDesk).removeMember(actorOf(member, membership), userSub)
    yield* logAs(member, membership, "member_removed", userSub)
  })
