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
      return record.criticality
    case "rtoHours":
      return numberText(record.rtoHours)
    case "rpoHours":
      return numberText(record.rpoHours)
    case "dataClassification":
      return record.dataClassification
    case "regulations":
      return orNull(renderRegulations(record.regulations))
    case "roleAssignments":
      return orNull(renderRoleAssignments(record.roleAssignments))
    case "licenseCost":
      return numberText(record.licenseCost)
    case "supportCost":
      return numberText(record.supportCost)
    case "infraCost":
      return numberText(record.infraCost)
    case "staffCost":
      return numberText(record.staffCost)
    case "status":
      return record.status
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
