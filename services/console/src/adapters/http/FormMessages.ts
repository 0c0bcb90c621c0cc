import { Effect, Schema, SchemaAST, SchemaIssue, SchemaTransformation } from "effect"

/**
 * What the forms tell of a value they refuse, in the words the console has always used (Effect 3's):
 * a form's custom message as it is, and Effect 3's sentences for the checks that carry none, each
 * quoting the value refused.
 */

/** The rules' options a form's value is decoded with: the issues keep the value they refuse, to quote it. */
const quoting = { reportInput: true } as const

/** A form's numeric text: a number written as such, else refused (Effect 4's own reads "" as 0, and other text as NaN). */
const numberOf = (text: string): number | undefined => {
  if (text === "NaN") return Number.NaN
  if (text === "Infinity") return Number.POSITIVE_INFINITY
  if (text === "-Infinity") return Number.NEGATIVE_INFINITY
  if (text.trim() === "") return undefined
  const number = Number(text)
  return Number.isNaN(number) ? undefined : number
}

/** A number typed in a form: refused, with what it was, unless it is one. */
export const NumberFromText = Schema.String.pipe(
  Schema.decodeTo(
    Schema.Number,
    SchemaTransformation.transformEffect({
      decode: (text: string, options) => {
        const number = numberOf(text)
        return number === undefined
          ? Effect.fail(new SchemaIssue.InvalidValue({ message: `Unable to decode ${JSON.stringify(text)} into a number` }, text, options))
          : Effect.succeed(number)
      },
      encode: (number: number) => Effect.succeed(String(number))
    })
  )
)

const quoted = (value: unknown) => (typeof value === "string" ? JSON.stringify(value) : String(value))

const actualOf = (issue: SchemaIssue.Issue) => (SchemaIssue.hasInput(issue) ? `, actual ${quoted(issue.input)}` : "")

/** The checks of the forms' rules without a message of their own, as Effect 3 worded them. */
const checkMessage = (issue: SchemaIssue.Filter): string | undefined => {
  const representation = issue.filter.annotations?.representation as { readonly id?: string; readonly payload?: Record<string, unknown> } | undefined
  const payload = representation?.payload ?? {}
  const actual = actualOf(issue.issue)
  switch (representation?.id) {
    case "effect/schema/isInt":
      return `Expected an integer${actual}`
    case "effect/schema/isBetween":
      return `Expected a number between ${payload["minimum"]} and ${payload["maximum"]}${actual}`
    case "effect/schema/isMinLength":
      return `Expected a string at least ${payload["minLength"]} character(s) long${actual}`
    case "effect/schema/isMaxLength":
      return `Expected a string at most ${payload["maxLength"]} character(s) long${actual}`
  }
  return undefined
}

const expectedOf = (ast: SchemaAST.AST): string =>
  SchemaAST.isLiteral(ast) ? JSON.stringify(ast.literal) : ast._tag.toLowerCase()

/** The message of the first thing refused, as Effect 3's formatter gave it first. */
const messageOf = (issue: SchemaIssue.Issue): string | undefined => {
  switch (issue._tag) {
    case "Pointer":
    case "Encoding":
      return messageOf(issue.issue)
    case "Composite":
      return messageOf(issue.issues[0])
    case "Filter":
      return SchemaIssue.defaultCheckHook(issue) ?? checkMessage(issue) ?? messageOf(issue.issue)
    case "AnyOf": {
      // One of several literals: Effect 3 named the first it was not.
      const first = issue.issues[0]
      if (first !== undefined) return messageOf(first)
      const member = issue.ast.types[0]
      return member === undefined ? undefined : `Expected ${expectedOf(member)}${actualOf(issue)}`
    }
    case "InvalidType":
      return `Expected ${expectedOf(issue.ast)}${actualOf(issue)}`
    case "InvalidValue":
      return typeof issue.annotations?.message === "string" ? issue.annotations.message : undefined
    case "MissingKey":
      return "is missing"
    default:
      return undefined
  }
}

/** Decodes a form's fields with `schema`: the value, or the first thing refused, in words for the page. */
export const decodeForm = <S extends Schema.ConstraintDecoder<unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (input: unknown) => decode(input, quoting)
}

/** The first message of a form refused by `decodeForm`. */
export const firstMessage = (error: Schema.SchemaError) => messageOf(error.issue) ?? "The form could not be read."

/** Where the first thing refused is. */
const pathOf = (issue: SchemaIssue.Issue): ReadonlyArray<PropertyKey> => {
  switch (issue._tag) {
    case "Pointer":
      return [...issue.path, ...pathOf(issue.issue)]
    case "Encoding":
    case "Filter":
      return pathOf(issue.issue)
    case "Composite":
      return pathOf(issue.issues[0])
    case "AnyOf":
      return issue.issues[0] === undefined ? [] : pathOf(issue.issues[0])
    default:
      return []
  }
}

/** The field of the first thing a form's schema refused. */
export const firstField = (error: Schema.SchemaError): string => String(pathOf(error.issue)[0] ?? "")
