import { type TrackedField, TrackedFields } from "@portfolio/domain"
import type { ApplicationRecord } from "./ApplicationRecord.js"
import { renderRegulations } from "./Regulations.js"
import { renderRoleAssignments } from "./RoleAssignments.js"

export interface FieldChange {
  readonly field: TrackedField
  readonly oldValue: string | null
  readonly newValue: string | null
}

/** Audit values are strings: numbers as their JSON text, empty lists as no value at all. */
const orNull = (text: string): string | null => (text.length === 0 ? null : text)
const numberText = (value: number | null): string | null => (value === null ? null : JSON.stringify(value))

const trackedValue = (record: ApplicationRecord, field: TrackedField): string | null => {
  switch (field) {
    case "criticality":
    case "dataClassification":
    case "status":
      return record[field]
    case "regulations":
      return orNull(renderRegulations(record.regulations))
    case "roleAssignments":
      return orNull(renderRoleAssignments(record.roleAssignments))
    default:
      return numberText(record[field])
  }
}

/**
 * The audited differences between two states of an application, in the order of the tracked
 * fields. A creation (`before` undefined) records every tracked field that gets a value.
 */
export const trackedChanges = (before: ApplicationRecord | undefined, after: ApplicationRecord): ReadonlyArray<FieldChange> =>
  TrackedFields.flatMap((field) => {
    const oldValue = before === undefined ? null : trackedValue(before, field)
    const newValue = trackedValue(after, field)
    return oldValue === newValue ? [] : [{ field, oldValue, newValue }]
  })
