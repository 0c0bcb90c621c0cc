import { type ArbRole, ScimUserSchemaUrn } from "@portfolio/domain"
import { Result } from "effect"
import {
  booleanOf,
  canonicalAttribute,
  canonicalNameAttribute,
  canonicalValues,
  checkedEmail,
  checkedOptionalText,
  checkedRole,
  checkedUserName,
  emailOf,
  invalidSyntax,
  invalidValue,
  isRecord,
  roleOf,
  ScimRefusal,
  type ScimUserAttributes
} from "./ScimUser.js"

/**
 * PATCH of a User (RFC 7644 3.5.2), as identity tools send it (docs/scim.md, "Operations"): `op`
 * in any case (Entra ID sends `Replace`), the paths of the attributes this service keeps, a value
 * map without path, booleans as strings. Paths naming attributes it does not keep (`title`, the
 * enterprise extension) change nothing, since tools send their default mappings; a path that names
 * a kept attribute in a way this service cannot follow is a 400.
 */
export interface ScimPatchOperation {
  readonly op: string
  readonly path?: string | undefined
  readonly value?: unknown
}

type NamePart = "givenName" | "familyName" | "formatted"

/** What a path designates on a User. `email` and `role` are the value of the User's one e-mail and one role. */
type Target =
  | { readonly kind: "ignored" }
  | { readonly kind: "active" | "userName" | "externalId" | "displayName" | "name" | "emails" | "email" | "roles" | "role" }
  | { readonly kind: "namePart"; readonly part: NamePart }

const Ignored: Target = { kind: "ignored" }
/** The core User schema's URN, compared in lower case. */
const CoreUserUrn = ScimUserSchemaUrn.toLowerCase()

const invalidPath = (path: string, why: string) =>
  Result.fail(new ScimRefusal({ status: 400, scimType: "invalidPath", detail: `'${path.slice(0, 100)}': ${why}.` }))
const noTarget = (path: string) =>
  Result.fail(new ScimRefusal({ status: 400, scimType: "noTarget", detail: `'${path.slice(0, 100)}' matches no value of this User.` }))

/** Whether a value sent names the User's e-mail or role: compared case-insensitively, as the e-mail is everywhere. */
const namesCurrent = (value: unknown, current: string) => typeof value === "string" && value.trim().toLowerCase() === current.toLowerCase()

/** A value in a filter: a JSON literal, or `True`/`False` as Entra ID writes them. */
const filterValue = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return booleanOf(text)
  }
}

/**
 * Whether a value filter (`type eq "work"`, `primary eq true`) selects the User's one e-mail or
 * role: that e-mail is of type work and primary, that role primary. Undefined: the filter is not
 * one this service reads.
 */
const selects = (filter: string, kind: "emails" | "roles", current: string): boolean | undefined => {
  const parsed = /^\s*(\w+)\s+eq\s+(\S.*?)\s*$/i.exec(filter)
  if (parsed === null) return undefined
  const attribute = parsed[1]!.toLowerCase()
  const value = filterValue(parsed[2]!)
  if (attribute === "primary") return booleanOf(value)
  if (attribute === "value" && typeof value === "string") return namesCurrent(value, current)
  if (attribute === "type" && kind === "emails" && typeof value === "string") return value.toLowerCase() === "work"
  return undefined
}

/** Longer than any path of the attributes kept: refused before any pattern reads it. */
const PathMaxLength = 256

const PathShape = /^([A-Za-z][\w$-]*)(?:\[([^\]]*)\])?(?:\.([A-Za-z][\w$-]*))?$/

/** What a path (without the core schema's URN) names on the User `current`. */
const targetOf = (path: string, current: ScimUserAttributes): Result.Result<Target, ScimRefusal> => {
  if (path.length > PathMaxLength) return invalidPath(path, `longer than ${PathMaxLength} characters`)
  const shape = PathShape.exec(path)
  if (shape === null) return invalidPath(path, "not a path this service reads")
  const [, head, filter, sub] = shape as unknown as [string, string, string | undefined, string | undefined]
  const attribute = canonicalAttribute(head)
  if (attribute === undefined) return Result.succeed(Ignored)
  switch (attribute) {
    case "active":
    case "userName":
    case "externalId":
    case "displayName":
      return filter === undefined && sub === undefined ? Result.succeed({ kind: attribute }) : invalidPath(path, `${attribute} has no sub-attribute`)
    case "name": {
      if (filter !== undefined) return invalidPath(path, "name takes no filter")
      if (sub === undefined) return Result.succeed({ kind: "name" })
      const part = canonicalNameAttribute(sub)
      return Result.succeed(part === undefined ? Ignored : { kind: "namePart", part: part as NamePart })
    }
    case "emails":
    case "roles": {
      if (filter !== undefined) {
        const selected = selects(filter, attribute, attribute === "emails" ? current.email : current.arbRole)
        if (selected === undefined) return invalidPath(path, `the filter of ${attribute} must be type eq "work", primary eq true or value eq "..."`)
        if (!selected) return noTarget(path)
      }
      if (sub === undefined) return Result.succeed({ kind: attribute })
      if (sub.toLowerCase() !== "value") return Result.succeed(Ignored)
      return Result.succeed({ kind: attribute === "emails" ? "email" : "role" })
    }
    default:
      return Result.fail(new ScimRefusal({ status: 400, scimType: "mutability", detail: `${attribute} is read-only.` }))
  }
}

/** A path with the core User schema's URN taken off; a path of another schema (an extension) is ignored. */
const withoutCoreUrn = (path: string): string | undefined => {
  const lower = path.toLowerCase()
  if (lower.startsWith(`${CoreUserUrn}:`)) return path.slice(CoreUserUrn.length + 1)
  return lower.startsWith("urn:") ? undefined : path
}

const values = (target: string, value: unknown) =>
  Result.fromNullishOr(canonicalValues(value), () => invalidValue(`${target}: expected an object or a list of objects.`))

/** `add` and `replace` of a target (single-valued here, so that both set it). */
const assign = (user: ScimUserAttributes, target: Target, value: unknown, defaultRole: ArbRole): Result.Result<ScimUserAttributes, ScimRefusal> => {
  switch (target.kind) {
    case "ignored":
      return Result.succeed(user)
    case "active": {
      const active = booleanOf(value)
      return active === undefined ? Result.fail(invalidValue("active: expected true or false.")) : Result.succeed({ ...user, active })
    }
    case "userName":
      return Result.map(checkedUserName(value), (userName) => ({ ...user, userName }))
    case "externalId":
      return Result.map(checkedOptionalText("externalId", value), (externalId) => ({ ...user, externalId }))
    case "displayName":
      return Result.map(checkedOptionalText("displayName", value), (displayName) => ({ ...user, displayName }))
    case "namePart":
      return assignNamePart(user, target.part, value)
    case "name":
      return assignName(user, value)
    case "emails":
      return Result.flatMap(values("emails", value), (emails) =>
        emails.length === 0 ? Result.succeed(user) : Result.map(emailOf(emails, user.userName), (email) => ({ ...user, email })))
    case "email":
      return Result.map(checkedEmail(value), (email) => ({ ...user, email }))
    case "roles":
      return Result.flatMap(values("roles", value), (roles) =>
        roles.length === 0 ? Result.succeed(user) : Result.map(roleOf(roles, defaultRole), (arbRole) => ({ ...user, arbRole })))
    case "role":
      return Result.map(checkedRole(value), (arbRole) => ({ ...user, arbRole }))
  }
}

const NamePartAttribute = { givenName: "givenName", familyName: "familyName", formatted: "formattedName" } as const

const assignNamePart = (user: ScimUserAttributes, part: NamePart, value: unknown) =>
  Result.map(checkedOptionalText(`name.${part}`, value), (text) => ({ ...user, [NamePartAttribute[part]]: text }))

/** `name` as a whole: the parts it holds are set, the others kept (RFC 7644 3.5.2.3). */
const assignName = (user: ScimUserAttributes, value: unknown): Result.Result<ScimUserAttributes, ScimRefusal> => {
  if (!isRecord(value)) return Result.fail(invalidValue("name: expected an object."))
  let named = Result.succeed(user) as Result.Result<ScimUserAttributes, ScimRefusal>
  for (const [key, text] of Object.entries(value)) {
    const part = canonicalNameAttribute(key)
    if (part !== undefined) named = Result.flatMap(named, (u) => assignNamePart(u, part as NamePart, text))
  }
  return named
}

/**
 * Whether a `remove` takes the User's one e-mail or role away. Without a value it does; with one
 * (RFC 7644 3.5.2.2: the values to remove from a multi-valued attribute), only when that value, or
 * one of the objects sent, names the current one: Entra ID removes the role it replaced, and that
 * must not undo the replacement. A value of another shape names nothing.
 */
const removes = (value: unknown, current: string) => {
  if (value === undefined) return true
  const values = typeof value === "string" ? [value] : canonicalValues(value)?.map((valued) => valued.value) ?? []
  return values.some((named) => namesCurrent(named, current))
}

/**
 * `remove`: optional attributes are cleared; the e-mail and the role fall back as on input, when
 * the operation names them (`removes`).
 */
const unassign = (user: ScimUserAttributes, target: Target, value: unknown, defaultRole: ArbRole): Result.Result<ScimUserAttributes, ScimRefusal> => {
  switch (target.kind) {
    case "ignored":
      return Result.succeed(user)
    case "active":
      return Result.fail(invalidValue("active cannot be removed: replace it with false."))
    case "userName":
      return Result.fail(invalidValue("userName cannot be removed: a User has one."))
    case "externalId":
    case "displayName":
      return Result.succeed({ ...user, [target.kind]: null })
    case "name":
      return Result.succeed({ ...user, givenName: null, familyName: null, formattedName: null })
    case "namePart":
      return Result.succeed({ ...user, [NamePartAttribute[target.part]]: null })
    case "emails":
    case "email":
      return removes(value, user.email) ? Result.map(emailOf([], user.userName), (email) => ({ ...user, email })) : Result.succeed(user)
    case "roles":
    case "role":
      return Result.succeed(removes(value, user.arbRole) ? { ...user, arbRole: defaultRole } : user)
  }
}

/** `add` or `replace` without a path: each attribute of the map as if it were a path. */
const assignMap = (user: ScimUserAttributes, map: unknown, defaultRole: ArbRole): Result.Result<ScimUserAttributes, ScimRefusal> => {
  if (!isRecord(map)) return Result.fail(invalidValue("an operation without path holds an object of attributes."))
  let result = Result.succeed(user) as Result.Result<ScimUserAttributes, ScimRefusal>
  for (const [key, value] of Object.entries(map)) {
    // The core schema's URN as a key holds attributes of its own (RFC 7644 3.5.2, "value").
    if (key.toLowerCase() === CoreUserUrn) {
      result = Result.flatMap(result, (u) => assignMap(u, value, defaultRole))
      continue
    }
    const path = withoutCoreUrn(key)
    if (path === undefined) continue
    result = Result.flatMap(result, (u) => Result.flatMap(targetOf(path, u), (target) => assign(u, target, value, defaultRole)))
  }
  return result
}

const applyOne = (user: ScimUserAttributes, operation: ScimPatchOperation, defaultRole: ArbRole): Result.Result<ScimUserAttributes, ScimRefusal> => {
  const op = typeof operation.op === "string" ? operation.op.toLowerCase() : ""
  if (op !== "add" && op !== "replace" && op !== "remove") {
    return Result.fail(invalidSyntax(`op: '${String(operation.op).slice(0, 20)}' is none of add, replace, remove.`))
  }
  if (operation.path === undefined) {
    if (op === "remove") return Result.fail(new ScimRefusal({ status: 400, scimType: "noTarget", detail: "remove needs a path." }))
    return assignMap(user, operation.value, defaultRole)
  }
  const path = withoutCoreUrn(operation.path.trim())
  if (path === undefined) return Result.succeed(user)
  return Result.flatMap(targetOf(path, user), (target) => {
    if (op === "remove") return unassign(user, target, operation.value, defaultRole)
    if (operation.value === undefined) return Result.fail(invalidValue(`${op} of '${path.slice(0, 100)}' needs a value.`))
    return assign(user, target, operation.value, defaultRole)
  })
}

/**
 * The User's attributes once every operation is applied, in order; the first refusal stops them
 * all (RFC 7644 3.5.2: a PATCH is atomic). `defaultRole` is the role a removed role falls back to.
 */
export const applyPatch = (
  user: ScimUserAttributes,
  operations: ReadonlyArray<ScimPatchOperation>,
  defaultRole: ArbRole
): Result.Result<ScimUserAttributes, ScimRefusal> =>
  operations.reduce(
    (result, operation) => Result.flatMap(result, (u) => applyOne(u, operation, defaultRole)),
    Result.succeed(user) as Result.Result<ScimUserAttributes, ScimRefusal>
  )
