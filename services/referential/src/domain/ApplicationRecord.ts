import { Schema } from "effect"
import { ApplicationCode, ApplicationStatus, AssignmentRole, Criticality, DataClassification, Hours, MinorUnits, RegulationToken } from "@portfolio/domain"

/** One ROLE:contact pair of an application, kept in its given order. */
export const RoleAssignment = Schema.Struct({
  role: AssignmentRole,
  contact: Schema.String
})
export type RoleAssignment = typeof RoleAssignment.Type

/**
 * An application as the referential stores it: multi-valued fields as lists, the legacy single
 * amount beside the split costs, and nothing derived (the deprecated read fields are computed).
 */
export const ApplicationRecord = Schema.Struct({
  code: ApplicationCode,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  parentCode: Schema.NullOr(ApplicationCode),
  status: ApplicationStatus,
  dataClassification: DataClassification,
  criticality: Criticality,
  rtoHours: Schema.NullOr(Hours),
  rpoHours: Schema.NullOr(Hours),
  regulations: Schema.Array(RegulationToken),
  roleAssignments: Schema.Array(RoleAssignment),
  licenseCost: Schema.NullOr(MinorUnits),
  supportCost: Schema.NullOr(MinorUnits),
  infraCost: Schema.NullOr(MinorUnits),
  staffCost: Schema.NullOr(MinorUnits),
  legacyAnnualCost: Schema.NullOr(MinorUnits),
  /** One more with every change of the application: what its events carry for receivers to order them. */
  revision: Schema.Int.pipe(Schema.positive()),
  createdAt: Schema.DateTimeUtc,
  updatedAt: Schema.DateTimeUtc
})
export type ApplicationRecord = typeof ApplicationRecord.Type
