import { Schema } from "effect"
import { ArbRole } from "./Role.js"
import { withoutControls } from "./Text.js"
import { DateTimeUtc, Uuid } from "./Wire.js"

export const InvitationStatus = Schema.Literals(["PENDING", "ACCEPTED", "REVOKED", "EXPIRED"])
export type InvitationStatus = typeof InvitationStatus.Type

export const MemberSource = Schema.Literals(["SIGNUP", "INVITATION", "SSO_JIT"])
export type MemberSource = typeof MemberSource.Type

/** Pragmatic address check (the HTML living standard's), bounded by RFC 5321 lengths. */
export const Email = Schema.String.pipe(
  Schema.check(Schema.isTrimmed()),
  Schema.check(Schema.isMaxLength(254)),
  Schema.check(Schema.isPattern(/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/u)),
  Schema.annotate({ identifier: "Email", format: "email" })
)

/**
 * A member's userSub as an SSO login may give one: 1 to 255 characters on one line without control
 * characters, and one path segment, since it travels as one in member removal (no '/' or '\\',
 * neither '.' nor '..'): a userSub no path can carry would make a member nobody can remove.
 */
export const UserSub = Schema.String.pipe(
  Schema.check(Schema.isMinLength(1)),
  Schema.check(Schema.isMaxLength(255)),
  Schema.check(Schema.makeFilter((s) => (!/[/\\]/.test(s) && s !== "." && s !== "..") || "a userSub cannot contain '/' or '\\', nor be '.' or '..'")),
  withoutControls({ lineBreaks: false })
)

export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: Uuid,
  email: Schema.String,
  arbRole: ArbRole,
  status: InvitationStatus,
  invitedByEmail: Schema.String,
  expiresAt: DateTimeUtc,
  createdAt: DateTimeUtc,
  acceptedAt: Schema.NullOr(DateTimeUtc),
  revokedAt: Schema.NullOr(DateTimeUtc)
}) {}

/**
 * Validated by the use case rather than the schema so that any bad value, a NUL character
 * included, gives INVALID_INVITATION_PARAM (docs/product-rules.md#invitations-and-members) rather than INVALID_REQUEST; neither
 * field reaches the database unless it is a valid address or role.
 */
export class InvitationRequest extends Schema.Class<InvitationRequest>("InvitationRequest")({
  email: Schema.String.annotate({ format: "email", description: "Invitee address." }),
  arbRole: Schema.String.annotate({ description: "One of tenant-admin, architect, portfolio-manager, contributor, viewer, arb-member." })
}) {}

export class Member extends Schema.Class<Member>("Member")({
  userSub: Schema.String,
  userEmail: Schema.String,
  arbRole: ArbRole,
  source: MemberSource,
  grantedAt: DateTimeUtc
}) {}

export class Tenant extends Schema.Class<Tenant>("Tenant")({
  id: Uuid,
  slug: Schema.String,
  createdAt: DateTimeUtc
}) {}

export const TenantSlug = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/u)),
  Schema.annotate({ identifier: "TenantSlug", description: "Lowercase letters, digits and '-', 1 to 40 characters." })
)
