import { type ApplicationInput, InvalidRequest, type InvalidRegulation } from "@portfolio/domain"
import type { ApplicationRecord, RoleAssignment } from "./ApplicationRecord.js"
import type { DateTime } from "effect"
import { Effect } from "effect"
import { parseRegulations } from "./Regulations.js"
import { normaliseContact, parseRoleAssignments, replaceRole } from "./RoleAssignments.js"

const DeprecatedInputFields = ["applicationVip", "annualCost", "contactIT", "contactMetier"] as const
export type DeprecatedInputField = (typeof DeprecatedInputFields)[number]

export interface MappedInput {
  readonly record: ApplicationRecord
  /** Deprecated fields present in the input, whether or not a newer field overrode them. */
  readonly deprecatedFields: ReadonlyArray<DeprecatedInputField>
}

/** Absent keeps the current value (or the default on creation); null clears. */
const pick = <A>(given: A | undefined, current: A | undefined, fallback: A): A =>
  given !== undefined ? given : current !== undefined ? current : fallback

const legacyContact = (
  pairs: ReadonlyArray<RoleAssignment>,
  role: "TECH_LEAD" | "PRODUCT_OWNER",
  field: DeprecatedInputField,
  contact: string | null | undefined
): Effect.Effect<ReadonlyArray<RoleAssignment>, InvalidRequest> =>
  contact === undefined
    ? Effect.succeed(pairs)
    : contact === null
    ? Effect.succeed(replaceRole(pairs, role, null))
    : Effect.map(normaliseContact(contact, field), (trimmed) => replaceRole(pairs, role, trimmed.length === 0 ? null : trimmed))

/**
 * The state an application PUT leads to. Newer fields win over the deprecated ones they replace:
 * `applicationVip` sets criticality only when `criticality` is absent, `annualCost` sets
 * `licenseCost` only when `licenseCost` is absent, and `contactIT` / `contactMetier` replace the
 * TECH_LEAD / PRODUCT_OWNER pairs only when `roleAssignments` is absent.
 */
export const applyApplicationInput = (options: {
  readonly code: string
  readonly current: ApplicationRecord | undefined
  readonly input: ApplicationInput
  readonly now: DateTime.Utc
}): Effect.Effect<MappedInput, InvalidRegulation | InvalidRequest> =>
  Effect.gen(function*() {
    const { code, current, input, now } = options
    const regulations = input.regulations !== undefined
      ? yield* parseRegulations(input.regulations)
      : current?.regulations ?? []

    let roleAssignments: ReadonlyArray<RoleAssignment>
    if (input.roleAssignments !== undefined) {
      roleAssignments = yield* parseRoleAssignments(input.roleAssignments)
    } else {
      roleAssignments = current?.roleAssignments ?? []
      roleAssignments = yield* legacyContact(roleAssignments, "TECH_LEAD", "contactIT", input.contactIT)
      roleAssignments = yield* legacyContact(roleAssignments, "PRODUCT_OWNER", "contactMetier", input.contactMetier)
    }

    const criticality = input.criticality !== undefined
      ? input.criticality
      : input.applicationVip !== undefined
      ? (input.applicationVip ? "MISSION_CRITICAL" : "NOMINAL")
      : current?.criticality ?? "NOMINAL"
    const licenseCost = input.licenseCost !== undefined
      ? input.licenseCost
      : input.annualCost !== undefined
      ? input.annualCost
      : current?.licenseCost ?? null

    const record: ApplicationRecord = {
      code,
      name: input.name,
      description: pick(input.description, current?.description, null),
      parentCode: pick(input.parentCode, current?.parentCode, null),
      status: pick(input.status, current?.status, "ACTIVE"),
      dataClassification: pick(input.dataClassification, current?.dataClassification, "INTERNAL"),
      criticality,
      rtoHours: pick(input.rtoHours, current?.rtoHours, null),
      rpoHours: pick(input.rpoHours, current?.rpoHours, null),
      regulations,
      roleAssignments,
      licenseCost,
      supportCost: pick(input.supportCost, current?.supportCost, null),
      infraCost: pick(input.infraCost, current?.infraCost, null),
      staffCost: pick(input.staffCost, current?.staffCost, null),
      legacyAnnualCost: current?.legacyAnnualCost ?? null,
      revision: (current?.revision ?? 0) + 1,
      createdAt: current?.createdAt ?? now,
      updatedAt: now
    }
    const total = [record.licenseCost, record.supportCost, record.infraCost, record.staffCost].reduce<number>(
      (sum, cost) => sum + (cost ?? 0),
      0
    )
    if (!Number.isSafeInteger(total)) {
      return yield* new InvalidRequest({ detail: "The four cost fields together exceed the largest exact amount (2^53 - 1 minor units)." })
    }
    return { record, deprecatedFields: DeprecatedInputFields.filter((field) => input[field] !== undefined) }
  })
