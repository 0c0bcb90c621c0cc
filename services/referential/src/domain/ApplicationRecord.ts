import { Schema } from "effect"
import { Application, AssignmentRole, MinorUnits, RegulationToken } from "@portfolio/domain"

/** One ROLE:contact pair of an application, kept in its given order. */
export const RoleAssignment = Schema.Struct({
  role: AssignmentRole,
  contact: Schema.String
})
export type RoleAssignment = typeof RoleAssignment.Type

// What the read and the record share is the read's schema; the record differs in the multi-valued
// fields (lists, not comma-separated strings), the legacy amount and the revision, and derives none
// of the deprecated read fields.
const {
  annualCost: _annualCost,
  applicationVip: _applicationVip,
  contactIT: _contactIT,
  contactMetier: _contactMetier,
  regulations: _regulations,
  roleAssignments: _roleAssignments,
  ...sharedWithTheRead
} = Application.fields

/**
 * An application as the referential stores it: multi-valued fields as lists, the legacy single
 * amount beside the split costs, and nothing derived (the deprecated read fields are computed).
 */
export const ApplicationRecord = Schema.Struct({
  ...sharedWithTheRead,
  regulations: Schema.Array(RegulationToken),
  roleAssignments: Schema.Array(RoleAssignment),
  legacyAnnualCost: Schema.NullOr(MinorUnits),
  /** One more with every change of the application: what its events carry for receivers to order them. */
  revision: Schema.Int.pipe(Schema.check(Schema.isGreaterThan(0)))
})
export type ApplicationRecord = typeof ApplicationRecord.Type
