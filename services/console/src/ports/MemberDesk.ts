import type { Invitation, Member as TenantMember } from "@portfolio/domain"
import { Context, type Effect } from "effect"
import type { UpstreamUnavailable } from "./DirectoryDesk.js"
import type { Actor, Refused } from "./TokenDesk.js"

/**
 * Members and invitations: provisioning's admin API, which applies the rules of the public
 * invitation endpoints to the member named (their role read from provisioning's own records).
 */
export interface MemberDeskShape {
  readonly members: (actor: Actor) => Effect.Effect<ReadonlyArray<TenantMember>, Refused | UpstreamUnavailable>
  readonly invitations: (actor: Actor) => Effect.Effect<ReadonlyArray<Invitation>, Refused | UpstreamUnavailable>
  readonly invite: (actor: Actor, email: string, arbRole: string) => Effect.Effect<Invitation, Refused | UpstreamUnavailable>
  readonly revokeInvitation: (actor: Actor, invitationId: string) => Effect.Effect<void, Refused | UpstreamUnavailable>
  readonly removeMember: (actor: Actor, userSub: string) => Effect.Effect<void, Refused | UpstreamUnavailable>
}

export class MemberDesk extends Context.Service<MemberDesk, MemberDeskShape>()("@portfolio/console/MemberDesk") {}
