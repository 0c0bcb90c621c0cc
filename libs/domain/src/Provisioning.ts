import { Schema } from "effect"
import { ArbRole } from "./Role.js"
import { withoutControls } from "./Text.js"

export const InvitationStatus = Schema.Literal("PENDING", "ACCEPTED", "REVOKED", "EXPIRED")
export type InvitationStatus = typeof InvitationStatus.Type

export const MemberSource = Schema.Literal("SIGNUP", "INVITATION", "SSO_JIT")
export type MemberSource = typeof MemberSource.Type

/** Pragmatic address check (the HTML living standard's), bounded by RFC 5321 lengths. */
export const Email = Schema.String.pipe(
  Schema.trimmed(),
  Schema.maxLength(254),
  Schema.pattern(/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/),
  Schema.annotations({ identifier: "Email", format: "email" })
)

/**
 * A member's userSub as an SSO login may give one: 1 to 255 characters on one line without control
 * characters, and one path segment, since it travels as one in member removal (no '/' or '\\',
 * neither '.' nor '..'): a userSub no path can carry would make a member nobody can remove.
 */
export const UserSub = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(255),
  Schema.filter((s) => !/[/\\]/.test(s) && s !== "." && s !== "..", { message: () => "a userSub cannot contain '/' or '\\', nor be '.' or '..'" }),
  withoutControls({ lineBreaks: false })
)

export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: Schema.UUID,
  email: Schema.String,
  arbRole: ArbRole,
  status: InvitationStatus,
  invitedByEmail: Schema.String,
  expiresAt: Schema.DateTimeUtc,
  createdAt: Schema.DateTimeUtc,
  acceptedAt: Schema.NullOr(Schema.DateTimeUtc),
  revokedAt: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/**
 * Validated by the use case rather than the schema so that any bad value, a NUL character
 * included, gives INVALID_INVITATION_PARAM (docs/product-rules.md#invitations-and-members) rather than INVALID_REQUEST; neither
 * field reaches the database unless it is a valid address or role.
 */
export class InvitationRequest extends Schema.Class<InvitationRequest>("InvitationRequest")({
  email: Schema.String.annotations({ format: "email", description: "Invitee address." }),
  arbRole: Schema.String.annotations({ description: "One of tenant-admin, architect, portfolio-manager, contributor, viewer, arb-member." })
}) {}

export class Member extends Schema.Class<Member>("Member")({
  userSub: Schema.String,
  userEmail: Schema.String,
  arbRole: ArbRole,
  source: MemberSource,
  grantedAt: Schema.DateTimeUtc
}) {}

export class Tenant extends Schema.Class<Tenant>("Tenant")({
  id: Schema.UUID,
  slug: Schema.String,
  createdAt: Schema.DateTimeUtc
}) {}

export const TenantSlug = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/),
  Schema.annotations({ identifier: "TenantSlug", description: "Lowercase letters, digits and '-', 1 to 40 characters." })
)
