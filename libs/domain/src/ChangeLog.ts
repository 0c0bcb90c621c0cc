import { Schema } from "effect"
import { ApplicationCode } from "./Application.js"
import { PageCursor, type PageSize } from "./Page.js"
import { DateTimeUtc, Uuid } from "./Wire.js"

/** The 11 fields whose changes the audit trail records (docs/product-rules.md#referential). */
export const TrackedField = Schema.Literals(["criticality", "rtoHours", "rpoHours", "dataClassification", "regulations", "roleAssignments", "licenseCost", "supportCost", "infraCost", "staffCost", "status"])
export type TrackedField = typeof TrackedField.Type
export const TrackedFields = TrackedField.literals

export class ChangeLogEntry extends Schema.Class<ChangeLogEntry>("ChangeLogEntry")({
  id: Uuid,
  applicationCode: ApplicationCode,
  field: TrackedField,
  oldValue: Schema.NullOr(Schema.String),
  newValue: Schema.NullOr(Schema.String),
  changedBy: Schema.String,
  changedAt: DateTimeUtc
}) {}

export const ChangeLimitDefault = 50
export const ChangeLimitCap = 200
/** The change log's own page sizes, the ones its `limit` had before cursors. */
export const ChangePageSize: PageSize = { default: ChangeLimitDefault, max: ChangeLimitCap }

/**
 * `limit`: default 50, values above 200 are capped to 200, values below 1 are refused; `cursor`
 * continues after the page that gave it (docs/product-rules.md#lists).
 */
export const ChangeListQuery = Schema.Struct({
  limit: Schema.optionalKey(
    Schema.NumberFromString.pipe(
      Schema.check(Schema.isInt()),
      Schema.check(Schema.isGreaterThanOrEqualTo(1)),
      Schema.annotate({ description: "Number of entries, default 50; values above 200 are capped to 200.", examples: [50] })
    )
  ),
  cursor: Schema.optionalKey(PageCursor)
})
