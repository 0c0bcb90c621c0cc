import { type AssignmentRole, AssignmentRoles, InvalidRequest } from "@portfolio/domain"
import type { RoleAssignment } from "./ApplicationRecord.js"
import { Effect } from "effect"

const isRole = (role: string): role is AssignmentRole => (AssignmentRoles as ReadonlyArray<string>).includes(role)

/** A contact is one item of a comma-separated list, so it cannot itself hold a comma. */
export const normaliseContact = (contact: string, field: string): Effect.Effect<string, InvalidRequest> => {
  const trimmed = contact.trim()
  if (trimmed.includes(",")) return Effect.fail(new InvalidRequest({ detail: `${field}: a contact cannot contain a comma.` }))
  return Effect.succeed(trimmed)
}

/**
 * Reads the comma-separated `ROLE:contact` pairs: the role is the text before the first colon,
 * both parts are trimmed, the role is case-sensitive, empty items are ignored and repeated pairs
 * collapse; the given order is kept (it decides which contact reads first for a role).
 */
export const parseRoleAssignments = (text: string): Effect.Effect<ReadonlyArray<RoleAssignment>, InvalidRequest> => {
  const pairs: Array<RoleAssignment> = []
  for (const raw of text.split(",")) {
    const item = raw.trim()
    if (item.length === 0) continue
    const colon = item.indexOf(":")
    const role = colon < 0 ? item : item.slice(0, colon).trim()
    const contact = colon < 0 ? "" : item.slice(colon + 1).trim()
    if (!isRole(role) || contact.length === 0) {
      return Effect.fail(
        new InvalidRequest({
          detail: `roleAssignments: '${item}' is not a ROLE:contact pair with ROLE among ${AssignmentRoles.join(", ")}.`
        })
      )
    }
    if (!pairs.some((pair) => pair.role === role && pair.contact === contact)) pairs.push({ role, contact })
  }
  return Effect.succeed(pairs)
}

export const renderRoleAssignments = (pairs: ReadonlyArray<RoleAssignment>): string =>
  pairs.map((pair) => `${pair.role}:${pair.contact}`).join(",")

/** Replaces every pair of `role` by one pair with `contact`, or removes them when `contact` is null. */
export const replaceRole = (
  pairs: ReadonlyArray<RoleAssignment>,
  role: AssignmentRole,
  contact: string | null
): ReadonlyArray<RoleAssignment> => {
  const others = pairs.filter((pair) => pair.role !== role)
  return contact === null ? others : [...others, { role, contact }]
}

export const firstContact = (pairs: ReadonlyArray<RoleAssignment>, role: AssignmentRole): string | null =>
  pairs.find((pair) => pair.role === role)?.contact ?? null
