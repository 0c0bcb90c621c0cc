import { ArbRole, Email, isControlCharacter, type ScimErrorType } from "@portfolio/domain"
import { Data, Result, Schema } from "effect"

/**
 * What a SCIM User holds that a client may set (docs/scim.md, "Users"): one e-mail, one role, and
 * `active`, which the person's membership decides once the change is made.
 */
export interface ScimUserAttributes {
  readonly userName: string
  readonly externalId: string | null
  readonly displayName: string | null
  readonly givenName: string | null
  readonly familyName: string | null
  readonly formattedName: string | null
  readonly email: string
  readonly arbRole: ArbRole
  readonly active: boolean
}

/** A refusal in SCIM's terms (RFC 7644 3.12): its status, and its `scimType` where RFC 7644 names one. */
export class ScimRefusal extends Data.TaggedError("ScimRefusal")<{
  readonly status: 400 | 404 | 409 | 412 | 415
  readonly scimType?: ScimErrorType
  readonly detail: string
}> {}

export const invalidValue = (detail: string) => new ScimRefusal({ status: 400, scimType: "invalidValue", detail })
export const invalidSyntax = (detail: string) => new ScimRefusal({ status: 400, scimType: "invalidSyntax", detail })

/** Text longer than this is no name nor address any identity tool sends: refused rather than stored. */
const ScimTextMaxLength = 256

const isEmail = Schema.is(Email)
const isArbRole = Schema.is(ArbRole)

/** Whether the text holds a character of `isControlCharacter` (docs/security.md, "Control characters"). */
export const hasControl = (text: string) => {
  for (const character of text) if (isControlCharacter(character.codePointAt(0)!)) return true
  return false
}

/**
 * A text attribute as it may be stored: on one line and shown to people (docs/security.md, "Control
 * characters"), and within `ScimTextMaxLength`.
 */
const checkedText = (attribute: string, value: unknown): Result.Result<string, ScimRefusal> => {
  if (typeof value !== "string") return Result.fail(invalidValue(`${attribute}: expected a string.`))
  if (value.length > ScimTextMaxLength) return Result.fail(invalidValue(`${attribute}: at most ${ScimTextMaxLength} characters.`))
  if (hasControl(value)) return Result.fail(invalidValue(`${attribute}: control characters are not accepted.`))
  return Result.succeed(value)
}

/** An optional text attribute: null clears it. */
export const checkedOptionalText = (attribute: string, value: unknown): Result.Result<string | null, ScimRefusal> =>
  value === null ? Result.succeed(null) : checkedText(attribute, value)

export const checkedUserName = (value: unknown): Result.Result<string, ScimRefusal> =>
  Result.flatMap(checkedText("userName", value), (userName) =>
    userName.trim() === "" ? Result.fail(invalidValue("userName: must not be empty.")) : Result.succeed(userName))

/** A boolean, or the strings Entra ID sends for one (`"True"`, `"False"`, in any case). */
export const booleanOf = (value: unknown): boolean | undefined => {
  if (typeof value === "boolean") return value
  if (typeof value === "string") {
    const lower = value.trim().toLowerCase()
    if (lower === "true") return true
    if (lower === "false") return false
  }
  return undefined
}

export const checkedEmail = (value: unknown): Result.Result<string, ScimRefusal> =>
  Result.flatMap(checkedText("emails.value", value), (raw) => {
    const email = raw.trim()
    const refusal = invalidValue(`emails.value: '${email.slice(0, 64)}' is not an e-mail address.`)
    return isEmail(email) ? Result.succeed(email) : Result.fail(refusal)
  })

export const checkedRole = (value: unknown): Result.Result<ArbRole, ScimRefusal> =>
  isArbRole(value)
    ? Result.succeed(value)
    : Result.fail(invalidValue(`roles.value: ${JSON.stringify(String(value).slice(0, 64))} is not a role; use one of ${ArbRole.literals.join(", ")}.`))

/** One value of `emails` or `roles`, as sent: only `value` and `primary` are read. */
export interface Valued {
  readonly value?: unknown
  readonly primary?: unknown
  readonly type?: unknown
  readonly display?: unknown
}

/** The primary value of a multi-valued attribute, else its first (RFC 7643 2.4). */
const chosen = <A extends Valued>(values: ReadonlyArray<A>): A | undefined => values.find((v) => booleanOf(v.primary) === true) ?? values[0]

/**
 * The User's one e-mail: the primary of `emails`, else the first, else `userName` when it is an
 * e-mail address; none of these is a 400 `invalidValue`.
 */
export const emailOf = (emails: ReadonlyArray<Valued> | null | undefined, userName: string): Result.Result<string, ScimRefusal> => {
  const picked = chosen(emails ?? [])
  if (picked !== undefined) return checkedEmail(picked.value)
  if (isEmail(userName.trim())) return Result.succeed(userName.trim())
  return Result.fail(invalidValue("emails: no e-mail address, and the userName is none either."))
}

/** The User's one role: the primary of `roles`, else the first; none gives `defaultRole`. */
export const roleOf = (roles: ReadonlyArray<Valued> | null | undefined, defaultRole: ArbRole): Result.Result<ArbRole, ScimRefusal> => {
  const picked = chosen(roles ?? [])
  return picked === undefined ? Result.succeed(defaultRole) : checkedRole(picked.value)
}

/** A User as a client sends it (POST, PUT), its names already folded (`canonicalUser`). */
export interface ScimUserInputLike {
  readonly userName: string
  readonly externalId?: string | null | undefined
  readonly name?: { readonly givenName?: string | undefined; readonly familyName?: string | undefined; readonly formatted?: string | undefined } | null | undefined
  readonly displayName?: string | null | undefined
  readonly emails?: ReadonlyArray<Valued> | null | undefined
  readonly active?: boolean | undefined
  readonly roles?: ReadonlyArray<Valued> | null | undefined
}

export interface InputDefaults {
  /** The role of a User whose input names none: the single sign-on connection's default, else viewer. */
  readonly defaultRole: ArbRole
  /**
   * The role when `roles` is absent altogether. A PUT that does not send `roles` (a tool mapping no
   * role) must not demote every member it pushes: RFC 7644 3.5.1 lets an omitted attribute keep its value.
   */
  readonly roleWhenAbsent: ArbRole
  /** `active` when absent: true for a new User, the current value for a replaced one. */
  readonly activeWhenAbsent: boolean
}

const optional = (attribute: string, value: string | null | undefined) => checkedOptionalText(attribute, value ?? null)

/** The attributes a POST or PUT asks for, by the rules of docs/scim.md. */
export const attributesOfInput = (input: ScimUserInputLike, defaults: InputDefaults): Result.Result<ScimUserAttributes, ScimRefusal> =>
  Result.gen(function*() {
    const userName = yield* checkedUserName(input.userName)
    return {
      userName,
      externalId: yield* optional("externalId", input.externalId),
      displayName: yield* optional("displayName", input.displayName),
      givenName: yield* optional("name.givenName", input.name?.givenName),
      familyName: yield* optional("name.familyName", input.name?.familyName),
      formattedName: yield* optional("name.formatted", input.name?.formatted),
      email: yield* emailOf(input.emails, userName),
      arbRole: input.roles === undefined ? defaults.roleWhenAbsent : yield* roleOf(input.roles, defaults.defaultRole),
      active: input.active ?? defaults.activeWhenAbsent
    }
  })

/** The attribute names of RFC 7643 that this service reads, by their lower case: names are case-insensitive (2.1). */
const canonicalNames = (names: ReadonlyArray<string>) => new Map(names.map((name) => [name.toLowerCase(), name]))
const UserNames = canonicalNames(["schemas", "id", "externalId", "userName", "name", "displayName", "emails", "active", "roles", "meta"])
const NameNames = canonicalNames(["formatted", "familyName", "givenName"])
const ValueNames = canonicalNames(["value", "display", "type", "primary"])
const PatchNames = canonicalNames(["schemas", "Operations"])
const OperationNames = canonicalNames(["op", "path", "value"])

/** The canonical spelling of a User attribute, or of a sub-attribute of `name`. */
export const canonicalAttribute = (name: string): string | undefined => UserNames.get(name.toLowerCase())
export const canonicalNameAttribute = (name: string): string | undefined => NameNames.get(name.toLowerCase())

/** A JSON object (not an array, not null). */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

type Folding = (value: unknown) => unknown

/**
 * An object's keys in their canonical case (unknown ones kept as sent, for the decoder to ignore),
 * each value folded by its key's rule. A key is only ever an own property of the result: a
 * `__proto__` sent in a body (JSON.parse makes it an own key) neither finds a rule nor sets a prototype.
 */
const foldObject = (names: ReadonlyMap<string, string>, rules: ReadonlyMap<string, Folding>): Folding => (value) => {
  if (!isRecord(value)) return value
  const folded: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(value)) {
    const name = names.get(key.toLowerCase()) ?? key
    const rule = rules.get(name)
    Object.defineProperty(folded, name, { value: rule === undefined ? member : rule(member), enumerable: true, writable: true, configurable: true })
  }
  return folded
}

const foldEach = (fold: Folding): Folding => (value) => (Array.isArray(value) ? value.map(fold) : value)
const foldBoolean: Folding = (value) => booleanOf(value) ?? value
const foldValue = foldObject(ValueNames, new Map([["primary", foldBoolean]]))

/** The values of `emails` or `roles` (one object or a list of them) with their names in canonical case. */
export const canonicalValues = (value: unknown): ReadonlyArray<Valued> | undefined => {
  const list = Array.isArray(value) ? value : [value]
  return list.every(isRecord) ? (list.map(foldValue) as ReadonlyArray<Valued>) : undefined
}

/** A User body with RFC 7643's names in their canonical case, and booleans sent as strings read as booleans. */
export const canonicalUser: Folding = foldObject(
  UserNames,
  new Map([
    ["name", foldObject(NameNames, new Map())],
    ["emails", foldEach(foldValue)],
    ["roles", foldEach(foldValue)],
    ["active", foldBoolean]
  ])
)

/** A PatchOp body with its names in their canonical case; each operation's value is read by `applyPatch`, names and all. */
export const canonicalPatch: Folding = foldObject(PatchNames, new Map([["Operations", foldEach(foldObject(OperationNames, new Map()))]]))
