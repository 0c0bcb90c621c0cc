import { Schema } from "effect"
import { PageQuery } from "./Page.js"
import { InputText, withoutControls } from "./Text.js"
import { DateTimeUtc } from "./Wire.js"

export const DataClassification = Schema.Literals(["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"])
export type DataClassification = typeof DataClassification.Type

export const Criticality = Schema.Literals(["MISSION_CRITICAL", "IMPORTANT", "NOMINAL", "LOW"])
export type Criticality = typeof Criticality.Type

export const ApplicationStatus = Schema.Literals(["ACTIVE", "PLANNED", "DEPRECATED", "RETIRED"])
export type ApplicationStatus = typeof ApplicationStatus.Type

export const RegulationToken = Schema.Literals(["DORA", "NIS2", "RGPD", "PCI_DSS", "HDS", "ISO_27001"])
export type RegulationToken = typeof RegulationToken.Type
export const RegulationTokens = RegulationToken.literals

export const AssignmentRole = Schema.Literals(["PRODUCT_OWNER", "BUSINESS_OWNER", "TECH_LEAD", "ARCHITECT", "SECURITY_OFFICER", "DATA_OWNER"])
export type AssignmentRole = typeof AssignmentRole.Type
export const AssignmentRoles = AssignmentRole.literals

/** An application code: the stable identifier used in paths. */
export const ApplicationCode = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/u)),
  Schema.annotate({
    identifier: "ApplicationCode",
    description: "1 to 64 characters: letters, digits, '.', '_' or '-', starting with a letter or digit.",
    examples: ["CRM-01"]
  })
)

/** Money in minor units (cents), as a JSON integer. Bounded to what a JSON number carries exactly. */
export const MinorUnits = Schema.Int.pipe(
  Schema.check(Schema.isBetween({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  Schema.annotate({ identifier: "MinorUnits", description: "Amount in minor units (cents), 64-bit integer.", format: "int64" })
)

export const Hours = Schema.Finite.pipe(
  Schema.check(Schema.isGreaterThanOrEqualTo(0)),
  Schema.check(Schema.isLessThanOrEqualTo(1_000_000)),
  Schema.annotate({ identifier: "Hours", description: "Non-negative number of hours, decimals allowed." })
)

const deprecated = (description: string) => ({ deprecated: true, description: `Deprecated, removed in v0.1.88. ${description}` })

/** The application as every read answers it. */
export class Application extends Schema.Class<Application>("Application")({
  code: ApplicationCode,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  parentCode: Schema.NullOr(ApplicationCode),
  status: ApplicationStatus,
  dataClassification: DataClassification,
  criticality: Criticality,
  rtoHours: Schema.NullOr(Hours),
  rpoHours: Schema.NullOr(Hours),
  regulations: Schema.String.annotate({ description: "Comma-separated tokens among DORA, NIS2, RGPD, PCI_DSS, HDS, ISO_27001; empty when none." }),
  roleAssignments: Schema.String.annotate({ description: "Comma-separated ROLE:contact pairs." }),
  licenseCost: Schema.NullOr(MinorUnits),
  supportCost: Schema.NullOr(MinorUnits),
  infraCost: Schema.NullOr(MinorUnits),
  staffCost: Schema.NullOr(MinorUnits),
  annualCost: Schema.NullOr(MinorUnits).annotate(
    deprecated("Sum of the four cost fields when at least one is set, otherwise the legacy single amount.")
  ),
  applicationVip: Schema.Boolean.annotate(deprecated("True when criticality is MISSION_CRITICAL.")),
  contactIT: Schema.NullOr(Schema.String).annotate(deprecated("First TECH_LEAD of roleAssignments.")),
  contactMetier: Schema.NullOr(Schema.String).annotate(deprecated("First PRODUCT_OWNER of roleAssignments.")),
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}) {}

const optionalNullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))
const oneLine = withoutControls({ lineBreaks: false })
const lines = withoutControls({ lineBreaks: true })

/**
 * The body of the application PUT (admin API). Absent fields keep their current value on update
 * and take their default on creation; `null` clears a nullable field.
 */
export class ApplicationInput extends Schema.Class<ApplicationInput>("ApplicationInput")({
  name: InputText.pipe(Schema.check(Schema.isTrimmed()), Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(200)), oneLine),
  description: optionalNullable(InputText.pipe(Schema.check(Schema.isMaxLength(4000)), lines)),
  parentCode: optionalNullable(ApplicationCode),
  status: Schema.optionalKey(ApplicationStatus),
  dataClassification: Schema.optionalKey(DataClassification),
  criticality: Schema.optionalKey(Criticality),
  rtoHours: optionalNullable(Hours),
  rpoHours: optionalNullable(Hours),
  regulations: Schema.optionalKey(InputText.pipe(Schema.check(Schema.isMaxLength(200)), oneLine)),
  roleAssignments: Schema.optionalKey(InputText.pipe(Schema.check(Schema.isMaxLength(4000)), oneLine)),
  licenseCost: optionalNullable(MinorUnits),
  supportCost: optionalNullable(MinorUnits),
  infraCost: optionalNullable(MinorUnits),
  staffCost: optionalNullable(MinorUnits),
  applicationVip: Schema.optionalKey(Schema.Boolean).annotate(deprecated("Maps to criticality when criticality is absent.")),
  annualCost: optionalNullable(MinorUnits).annotate(deprecated("Maps to licenseCost when licenseCost is absent.")),
  contactIT: optionalNullable(InputText.pipe(Schema.check(Schema.isMaxLength(200)), oneLine)).annotate(deprecated("Maps to a TECH_LEAD role assignment.")),
  contactMetier: optionalNullable(InputText.pipe(Schema.check(Schema.isMaxLength(200)), oneLine)).annotate(deprecated("Maps to a PRODUCT_OWNER role assignment."))
}) {}

export const ApplicationFilters = Schema.Struct({
  data_class: Schema.optionalKey(DataClassification),
  criticality: Schema.optionalKey(Criticality),
  regulation: Schema.optionalKey(RegulationToken),
  status: Schema.optionalKey(ApplicationStatus)
})
export type ApplicationFilters = typeof ApplicationFilters.Type

/** The query of the application list: its filters, and the page asked for (docs/product-rules.md#lists). */
export const ApplicationListQuery = Schema.Struct({ ...ApplicationFilters.fields, ...PageQuery.fields })
