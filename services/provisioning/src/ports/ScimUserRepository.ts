import type { ArbRole } from "@portfolio/domain"
import { Context, Data, type DateTime, type Effect, type Option } from "effect"
import type { ScimFilterCondition } from "../domain/ScimFilter.js"

/**
 * A SCIM User as stored (docs/scim.md, "Users"): what the identity tool set, the role, and the
 * link to the person's membership (`userSub`) or pending invitation (`invitationId`).
 */
export interface ScimUserRecord {
  readonly id: string
  readonly tenantId: string
  readonly userName: string
  readonly externalId: string | null
  readonly email: string
  readonly givenName: string | null
  readonly familyName: string | null
  readonly formattedName: string | null
  readonly displayName: string | null
  readonly arbRole: ArbRole
  readonly userSub: string | null
  readonly invitationId: string | null
  /** Increased by every change: the weak ETag. */
  readonly version: number
  readonly createdAt: DateTime.Utc
  readonly updatedAt: DateTime.Utc
}

/**
 * A User as read: `active` is not stored but read from the members, true exactly when its userSub
 * is an active member of the tenant, whichever door removed or brought them back.
 */
export interface ScimUserView extends ScimUserRecord {
  readonly active: boolean
}

export interface ScimUserPage {
  /** Every User meeting the filter, however few the page holds. */
  readonly totalResults: number
  readonly users: ReadonlyArray<ScimUserView>
}

/** Another User of the tenant has this userName or e-mail (compared case-insensitively). */
export class ScimUserTaken extends Data.TaggedError("ScimUserTaken")<{ readonly attribute: "userName" | "email" }> {}

/** Where the tenants' SCIM Users are kept. A deleted User is never read again. */
export interface ScimUserRepositoryShape {
  /**
   * Gives every active member of the tenant without a User one (`userName` and e-mail the member's,
   * their role, linked to them); a User without a link whose e-mail is such a member's is linked to
   * them instead (and takes their role).
   */
  readonly adoptMembers: (tenantId: string, at: DateTime.Utc) => Effect.Effect<void>
  /** The tenant's Users meeting every condition, oldest first (then by id), `offset` of them skipped, at most `limit`. */
  readonly list: (
    tenantId: string,
    filter: ReadonlyArray<ScimFilterCondition>,
    page: { readonly offset: number; readonly limit: number }
  ) => Effect.Effect<ScimUserPage>
  /** A User of the tenant; none for an id that is no UUID. */
  readonly findById: (tenantId: string, id: string) => Effect.Effect<Option.Option<ScimUserView>>
  /** As `findById`; inside a unit of work, also holds the User until the work ends, so that changes to it queue. */
  readonly lockById: (tenantId: string, id: string) => Effect.Effect<Option.Option<ScimUserView>>
  readonly insert: (record: ScimUserRecord) => Effect.Effect<void, ScimUserTaken>
  /** Writes the User whole if its stored version is `expectedVersion`; false otherwise (or once deleted). */
  readonly update: (record: ScimUserRecord, expectedVersion: number) => Effect.Effect<boolean, ScimUserTaken>
  /** False when there was no such User. */
  readonly markDeleted: (tenantId: string, id: string, at: DateTime.Utc) => Effect.Effect<boolean>
  /**
   * A new version of the User that stands for this member, whose membership changed through any
   * door (a removal, a role, an acceptance), so that its ETag changes with its `active` and role;
   * when no User stands for them, the User made for `invitationId` (the one they accepted), now
   * linked to them.
   */
  readonly memberChanged: (tenantId: string, userSub: string, invitationId: string | null, at: DateTime.Utc) => Effect.Effect<void>
}

export class ScimUserRepository extends Context.Service<
  ScimUserRepository,
  ScimUserRepositoryShape
>()("@portfolio/provisioning/ScimUserRepository") {}
