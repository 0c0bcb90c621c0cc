import { type SchemaAST, SchemaIssue } from "effect"

/**
 * The issues of a refused request, worded as Effect 3's schema formatter worded them (`is missing`,
 * `Expected a string at least 1 character(s) long, actual ""`): they are the `detail` of a 400
 * INVALID_REQUEST, which clients, the CLI and the documentation show, and Effect 4 words every one
 * of them differently.
 */

/**
 * Effect 3's words for a key that is absent and for one the schema does not know: the API's 400s
 * and SCIM's errors (`decodeIssues`), the console's forms (built on `decodeIssues`) and the CLI
 * (`effect3KeyWords`) all print them.
 */
export const MissingKeyWords = "is missing"
export const UnexpectedKeyWords = "is unexpected"

/**
 * For the formatters of Effect 4 itself (`SchemaIssue.makeFormatterStandardSchemaV1`): absent and
 * unknown keys in Effect 3's words, every other issue in Effect 4's. The CLI's reports of a refused
 * document (libs/cli, Failure.ts) are worded so; the API's are `decodeIssues`'s.
 */
export const effect3KeyWords: SchemaIssue.LeafHook = (issue) => {
  switch (issue._tag) {
    case "MissingKey":
      return MissingKeyWords
    case "UnexpectedKey":
      return UnexpectedKeyWords
    default:
      return SchemaIssue.defaultLeafHook(issue)
  }
}

export interface DecodeIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** A refused value as Effect 3 quoted it: strings in double quotes, the rest as JSON or as text. */
const formatActual = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "bigint") return `${u}n`
  if (typeof u === "object" && u !== null) {
    try {
      return JSON.stringify(u)
    } catch {
      return String(u)
    }
  }
  return String(u)
}

const formatKey = (key: PropertyKey): string => (typeof key === "string" ? JSON.stringify(key) : String(key))

/** What Effect 3 printed for a schema: its identifier, title or description if it had one, else its shape. */
const expectedOf = (ast: SchemaAST.AST): string => {
  const annotations = ast.annotations
  for (const name of ["identifier", "title", "description"] as const) {
    const value = annotations?.[name]
    if (typeof value === "string") return value
  }
  switch (ast._tag) {
    case "String":
      return "string"
    case "Number":
      return "number"
    case "Boolean":
      return "boolean"
    case "BigInt":
      return "bigint"
    case "Symbol":
      return "symbol"
    case "Null":
      return "null"
    case "Undefined":
      return "undefined"
    case "Void":
      return "void"
    case "Never":
      return "never"
    case "Unknown":
      return "unknown"
    case "Any":
      return "any"
    case "ObjectKeyword":
      return "object"
    case "Literal":
      return formatActual(ast.literal)
    case "Union":
      return ast.types.map(expectedOf).join(" | ")
    case "Arrays":
      return ast.rest.length === 1 && ast.elements.length === 0 ? `ReadonlyArray<${expectedOf(ast.rest[0]!)}>` : "readonly [...]"
    case "Objects":
      return `{ ${
        ast.propertySignatures.map((property) =>
          `readonly ${String(property.name)}${property.type.context?.isOptional === true ? "?" : ""}: ${expectedOf(property.type)}`
        ).join("; ")
      } }`
    default:
      return ast._tag
  }
}

interface Representation {
  readonly id: string
  readonly payload: Record<string, unknown> | null
}

const representationOf = (filter: SchemaAST.Filter<unknown>): Representation | undefined => {
  const representation = (filter.annotations as { readonly representation?: Representation } | undefined)?.representation
  return representation !== undefined && typeof representation.id === "string" ? representation : undefined
}

/** Effect 3's description of each check the contracts use, by Effect 4's identifier of that check. */
const describeCheck = (filter: SchemaAST.Filter<unknown>): string | undefined => {
  const representation = representationOf(filter)
  if (representation === undefined) return undefined
  const payload = representation.payload ?? {}
  const n = (key: string) => String(payload[key])
  switch (representation.id) {
    case "effect/schema/isMinLength":
      return `a string at least ${n("minLength")} character(s) long`
    case "effect/schema/isMaxLength":
      return `a string at most ${n("maxLength")} character(s) long`
    case "effect/schema/isPattern":
      return `a string matching the pattern ${n("source")}`
    case "effect/schema/isTrimmed":
      return "a string with no leading or trailing whitespace"
    case "effect/schema/isUUID":
      return "a Universally Unique Identifier"
    case "effect/schema/isInt":
      return "an integer"
    case "effect/schema/isFinite":
      return "a finite number"
    case "effect/schema/isBetween":
      return `a number between ${n("minimum")} and ${n("maximum")}`
    case "effect/schema/isGreaterThanOrEqualTo":
      return payload["minimum"] === 0 ? "a non-negative number" : `a number greater than or equal to ${n("minimum")}`
    case "effect/schema/isGreaterThan":
      return payload["exclusiveMinimum"] === 0 || payload["minimum"] === 0 ? "a positive number" : `a number greater than ${n("exclusiveMinimum")}`
    case "effect/schema/isLessThanOrEqualTo":
      return `a number less than or equal to ${n("maximum")}`
    case "effect/schema/isLessThan":
      return `a number less than ${n("exclusiveMaximum")}`
    default:
      return undefined
  }
}

const ownMessage = (annotations: { readonly [key: string]: unknown } | undefined): string | undefined => {
  const message = annotations?.["message"]
  return typeof message === "string" ? message : undefined
}

/**
 * `, actual <value>` when the decoder reported the refused value (the contracts parse with
 * `reportInput`), as Effect 3 always wrote it; nothing otherwise, rather than a value it did not see.
 */
const actual = (issue: SchemaIssue.Issue): string => (SchemaIssue.hasInput(issue) ? `, actual ${formatActual(issue.input)}` : "")

/** The issues of `issue`, Effect 3's array formatter's way: one per leaf, each with its path. */
export const decodeIssues = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey> = []): ReadonlyArray<DecodeIssue> => {
  switch (issue._tag) {
    case "Pointer":
      return decodeIssues(issue.issue, [...path, ...issue.path])
    case "Encoding":
      return decodeIssues(issue.issue, path)
    case "Composite":
      // Effect 3 checked a value's filters one after the other and stopped at the first refusal.
      return issue.issues.every((inner) => inner._tag === "Filter")
        ? decodeIssues(issue.issues[0], path)
        : issue.issues.flatMap((inner) => decodeIssues(inner, path))
    case "AnyOf":
      return issue.issues.length > 0
        ? issue.issues.flatMap((inner) => decodeIssues(inner, path))
        : issue.ast.types.map((member) => ({ path, message: `Expected ${expectedOf(member)}${actual(issue)}` }))
    case "Filter": {
      const message = ownMessage(issue.filter.annotations) ?? ownMessage(issue.issue._tag === "InvalidValue" ? issue.issue.annotations : undefined)
      if (message !== undefined) return [{ path, message }]
      const described = describeCheck(issue.filter)
      if (described !== undefined) return [{ path, message: `Expected ${described}${actual(issue)}` }]
      return decodeIssues(issue.issue, path)
    }
    case "MissingKey":
      return [{ path, message: ownMessage(issue.annotations) ?? MissingKeyWords }]
    case "UnexpectedKey": {
      const expected = issue.ast._tag === "Objects" ? issue.ast.propertySignatures.map((property) => formatKey(property.name)).join(" | ") : ""
      return [{ path, message: expected === "" ? UnexpectedKeyWords : `${UnexpectedKeyWords}, expected: ${expected}` }]
    }
    case "InvalidType":
      // A union of literals failed each of its members in Effect 3, which said so once per member.
      return issue.ast._tag === "Union" && issue.ast.annotations === undefined
        ? issue.ast.types.map((member) => ({ path, message: `Expected ${expectedOf(member)}${actual(issue)}` }))
        : [{ path, message: ownMessage(issue.ast.annotations) ?? `Expected ${expectedOf(issue.ast)}${actual(issue)}` }]
    case "InvalidValue":
    case "Forbidden":
      return [{ path, message: ownMessage(issue.annotations) ?? `Expected a valid value${actual(issue)}` }]
    case "OneOf":
      return [{ path, message: `Expected exactly one member of ${expectedOf(issue.ast)}${actual(issue)}` }]
  }
}
