import type { ArbRole, Unavailable } from "@portfolio/domain"
import { Context, type Effect, type Option } from "effect"

/** A tenant member as the record of memberships (provisioning) holds them now. */
export interface CurrentMember {
  readonly email: string
  readonly role: ArbRole
}

/**
 * The tenant's members as they stand, read when a grant is about to be made on someone's behalf:
 * a PAT request names a member and a role as they were when it was filed, and carries no authority
 * of its own (docs/product-rules.md#pat-requests). None for someone who is not, or no longer, an
 * active member; `Unavailable` when the record cannot be read, so that nothing is granted blind.
 */
export interface MembershipDeskShape {
  readonly current: (tenantId: string, userSub: string) => Effect.Effect<Option.Option<CurrentMember>, Unavailable>
}

export class MembershipDesk extends Context.Service<MembershipDesk, MembershipDeskShape>()("@portfolio/gateway/MembershipDesk") {}
