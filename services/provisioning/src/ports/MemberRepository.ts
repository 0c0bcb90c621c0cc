import { Context, Data, type DateTime, type Effect, type Option } from "effect"
import type { ArbRole, Member } from "@portfolio/domain"
import type { KeysetRequest } from "@portfolio/platform/http"

export interface MemberRecord {
  readonly tenantId: string
  readonly member: Member
}

/**
 * Where a member stands in the list: the grant's time and the userSub, which name one membership
 * (the one order of writing that breaks ties of time is the storage's own).
 */
export interface MemberPosition {
  readonly grantedAt: DateTime.Utc
  readonly userSub: string
}

/**
 * Where tenant memberships are kept. A removed member's row stays (records keep its userSub) but
 * no read here returns it any more.
 */
export interface MemberRepositoryShape {
  /**
   * Adds an active member. Fails with `MemberExists` when the tenant already has an active member
   * with that e-mail (compared case-insensitively) or that userSub.
   */
  readonly insert: (record: MemberRecord) => Effect.Effect<void, MemberExists>
  /** The active member with this e-mail, compared case-insensitively. */
  readonly findActiveByEmail: (tenantId: string, email: string) => Effect.Effect<Option.Option<Member>>
  readonly findActiveBySub: (tenantId: string, userSub: string) => Effect.Effect<Option.Option<Member>>
  /** Whether the tenant has a removed membership of this userSub (active ones aside). */
  readonly hasRemovedMembership: (tenantId: string, userSub: string) => Effect.Effect<boolean>
  /**
   * Active members, most recently granted first (ties: the membership written last first); with
   * `page`, the first `page.limit` of those after `page.after` in that order.
   */
  readonly listActive: (tenantId: string, page?: KeysetRequest<MemberPosition>) => Effect.Effect<ReadonlyArray<Member>>
  /** The active memberships of this userSub in every tenant, in the order they were written. */
  readonly listActiveByUserSub: (userSub: string) => Effect.Effect<ReadonlyArray<MemberRecord>>
  /**
   * The userSubs of the tenant's active tenant-admins, locked until the end of the enclosing unit
   * of work, so that concurrent removals see each other's outcome before deciding.
   */
  readonly lockActiveAdmins: (tenantId: string) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Sets the active member's role; false when there is no such member. The tenant's last
   * tenant-admin is the caller's to keep, on the rows `lockActiveAdmins` holds.
   */
  readonly changeRole: (tenantId: string, userSub: string, role: ArbRole) => Effect.Effect<boolean>
  /** Marks the active membership removed; false when there was none. */
  readonly remove: (tenantId: string, userSub: string, at: DateTime.Utc) => Effect.Effect<boolean>
}

export class MemberExists extends Data.TaggedError("MemberExists")<{}> {}

export class MemberRepository extends Context.Service<
  MemberRepository,
  MemberRepositoryShape
>()("@portfolio/provisioning/MemberRepository") {}
