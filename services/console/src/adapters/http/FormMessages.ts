import { decodeIssues } from "@portfolio/platform/http"
import { Effect, Schema, SchemaIssue, SchemaTransformation } from "effect"

/**
 * What the forms tell of a value they refuse, in the words the console has always used (Effect 3's),
 * which are the API's: the first of the issues `decodeIssues` words, and the field it is about.
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

/** Decodes a form's fields with `schema`: the value, or the first thing refused, in words for the page. */
export const decodeForm = <S extends Schema.ConstraintDecoder<unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (input: unknown) => decode(input, quoting)
}

/**
 * The first thing a form's schema refused, worded as the API words a refused request's issues
 * (`decodeIssues`, libs/platform): a form's own message as it is, Effect 3's sentences for the
 * checks that carry none, each quoting the value refused.
 */
const firstIssue = (error: Schema.SchemaError) => decodeIssues(error.issue)[0]

/** The first message of a form refused by `decodeForm`. */
export const firstMessage = (error: Schema.SchemaError) => firstIssue(error)?.message ?? "The form could not be read."

/** The field of the first thing a form's schema refused. */
export const firstField = (error: Schema.SchemaError): string => String(firstIssue(error)?.path[0] ?? "")
