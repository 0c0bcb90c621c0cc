import { Schema } from "effect"

/**
 * Additive pagination of the public lists (docs/product-rules.md#lists): without `limit` and
 * `cursor` a list is the whole v1 array; with either, a page of it in the same order, and a
 * `Link: <...>; rel="next"` header (RFC 8288) while more items follow.
 */

/** Items of a page asked for with a `cursor` alone. */
export const PageLimitDefault = 100
/** Larger values of `limit` are capped to it rather than refused, as the change log's `limit` is. */
export const PageLimitMax = 1000
/** Refused before it is decoded; room for the flat function list, whose key is a path of codes. */
export const PageCursorMaxLength = 8192

/** A whole number from 1 up; the cap is applied by the list, so that a large value is not an error. */
export const pageLimit = (description: string) =>
  Schema.NumberFromString.pipe(Schema.check(Schema.isInt()), Schema.check(Schema.isGreaterThanOrEqualTo(1)), Schema.annotate({ description }))

/**
 * Any string: the list decodes it, so that every cursor it cannot use gets one and the same
 * answer, 400 "invalid cursor".
 */
export const PageCursor = Schema.String.annotate({
  description: "Opaque: the `cursor` of the previous answer's `Link: <...>; rel=\"next\"` header. Valid only for the same list with the same filters."
})

const PageLimitDescription =
  `Page size, 1 or more; values above ${PageLimitMax} are capped to ${PageLimitMax}. Without \`limit\` and \`cursor\` the whole list is answered; with \`cursor\` alone, pages of ${PageLimitDefault}.`

/** `limit` and `cursor`, the query parameters every paginated list adds to its own. */
export const PageQuery = Schema.Struct({
  limit: Schema.optionalKey(pageLimit(PageLimitDescription)),
  cursor: Schema.optionalKey(PageCursor)
})
export type PageQuery = typeof PageQuery.Type

/** What a page asks for, once the list's defaults are applied. */
export interface PageSize {
  readonly default: number
  readonly max: number
}
export const PublicPageSize: PageSize = { default: PageLimitDefault, max: PageLimitMax }

type Operation = Record<string, any>

const linkHeader = {
  description:
    "Present when more items follow this page: `<URL>; rel=\"next\"` (RFC 8288), a reference relative to the request's URL repeating its query parameters with the next `cursor` (on `/referentiel/applications?status=ACTIVE&limit=100`: `<applications?status=ACTIVE&limit=100&cursor=...>; rel=\"next\"`). Absent on the last page and whenever neither `limit` nor `cursor` was sent.",
  schema: { type: "string" }
}

/**
 * The OpenAPI side of a paginated list: `limit` as the integer it is read as (the generated
 * document knows only its wire form, a string, and that form's description), and the `Link`
 * header of the 200.
 */
export const paginatedOperation = (options: { readonly defaultLimit?: number; readonly limitDescription?: string } = {}) =>
(operation: Operation): Operation => ({
  ...operation,
  parameters: (operation.parameters as Array<Operation>).map((parameter) =>
    parameter.name === "limit"
      ? {
        ...parameter,
        description: options.limitDescription ?? PageLimitDescription,
        // A parameter with an example is written into the operation's code samples.
        ...(options.defaultLimit === undefined ? {} : { example: options.defaultLimit }),
        schema: {
          type: "integer",
          minimum: 1,
          ...(options.defaultLimit === undefined ? {} : { default: options.defaultLimit }),
          examples: [options.defaultLimit ?? PageLimitDefault]
        }
      }
      : parameter
  ),
  responses: {
    ...operation.responses,
    "200": { ...operation.responses["200"], headers: { ...operation.responses["200"]?.headers, Link: linkHeader } }
  }
})
