import { ArbRole, Member, Tenant } from "@portfolio/domain"
import { Schema } from "effect"

/** Row shapes of the `provisioning` schema; `pg` hands timestamptz columns over as `Date`. */
export const TenantRow = Schema.Struct({ ...Tenant.fields, createdAt: Schema.DateTimeUtcFromDate })

export const MemberRow = Schema.Struct({ ...Member.fields, grantedAt: Schema.DateTimeUtcFromDate })

export const InvitationRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literals(["invitation", "welcome"]),
  tenantId: Schema.String,
  email: Schema.String,
  arbRole: ArbRole,
  invitedByEmail: Schema.String,
  createdAt: Schema.DateTimeUtcFromDate,
  expiresAt: Schema.DateTimeUtcFromDate,
  acceptedAt: Schema.NullOr(Schema.DateTimeUtcFromDate),
  revokedAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
})
