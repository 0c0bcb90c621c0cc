import { ScimUserSchemaUrn } from "@portfolio/domain"
import { Result } from "effect"
import { hasControl, ScimRefusal } from "./ScimUser.js"

/**
 * The filters of `GET /Users` (docs/scim.md, "Filters"): `attribute eq "value"`, alone or joined
 * by `and`. What identity tools send to find a person before creating them; anything richer is
 * refused rather than half-understood.
 */
export type ScimFilterAttribute = "userName" | "emails.value" | "externalId" | "id"

export interface ScimFilterCondition {
  readonly attribute: ScimFilterAttribute
  readonly value: string
}

/**
 * Compared case-insensitively (RFC 7643 gives userName and e-mails `caseExact: false`); the others
 * exactly. The one statement of the rule: every User store reads it from here.
 */
export const comparesCaseInsensitively = (attribute: ScimFilterAttribute) => attribute === "userName" || attribute === "emails.value"

/** An attribute's path qualified by the core User schema, compared in lower case. */
const CoreUserPrefix = `${ScimUserSchemaUrn.toLowerCase()}:`

const Attributes: ReadonlyMap<string, ScimFilterAttribute> = new Map([
  ["username", "userName"],
  ["emails.value", "emails.value"],
  ["externalid", "externalId"],
  ["id", "id"]
])

const SupportedGrammar = "the supported filters are userName, emails.value, externalId or id eq \"value\", joined by and"

const invalidFilter = (why: string) =>
  Result.fail(new ScimRefusal({ status: 400, scimType: "invalidFilter", detail: `${why}; ${SupportedGrammar}.` }))

type Token = { readonly kind: "word"; readonly text: string } | { readonly kind: "string"; readonly text: string }

const Space = /\s+/y
const Literal = /"(?:[^"\\]|\\.)*"/y
const Word = /[^\s"()[\]]+/y

/** Where a sticky pattern matches at `at`, if it does: one pass over the filter, whatever its length. */
const matchAt = (pattern: RegExp, text: string, at: number) => {
  pattern.lastIndex = at
  return pattern.exec(text)?.[0]
}

/** Words and JSON string literals; any other character (a parenthesis, a bracket) is outside the grammar. */
const tokens = (filter: string): Result.Result<ReadonlyArray<Token>, ScimRefusal> => {
  const found: Array<Token> = []
  let i = 0
  while (i < filter.length) {
    const space = matchAt(Space, filter, i)
    if (space !== undefined) {
      i += space.length
      continue
    }
    if (filter[i] === "\"") {
      const literal = matchAt(Literal, filter, i)
      // JSON's own reading of the literal: its escapes, and no raw control character.
      const text = literal === undefined ? undefined : Result.getOrUndefined(Result.try(() => JSON.parse(literal) as string))
      if (literal === undefined || text === undefined) return invalidFilter("an unterminated or malformed string")
      // An escaped one (`\u0000`) too: no stored text holds one, and PostgreSQL's text refuses NUL.
      if (hasControl(text)) return invalidFilter("a string holding a control character")
      found.push({ kind: "string", text })
      i += literal.length
      continue
    }
    const word = matchAt(Word, filter, i)
    if (word === undefined) return invalidFilter(`'${filter[i]}' is not supported`)
    found.push({ kind: "word", text: word })
    i += word.length
  }
  return Result.succeed(found)
}

const attributeOf = (word: string): ScimFilterAttribute | undefined => {
  const lower = word.toLowerCase()
  return Attributes.get(lower.startsWith(CoreUserPrefix) ? lower.slice(CoreUserPrefix.length) : lower)
}

/** The conditions of a filter, all of which a User must meet; a 400 `invalidFilter` for anything else. */
export const parseScimFilter = (filter: string): Result.Result<ReadonlyArray<ScimFilterCondition>, ScimRefusal> =>
  Result.flatMap(tokens(filter), (found) => {
    const conditions: Array<ScimFilterCondition> = []
    for (let i = 0; ; i += 4) {
      const [attribute, operator, value] = [found[i], found[i + 1], found[i + 2]]
      if (attribute === undefined) return invalidFilter("an empty filter or a dangling 'and'")
      if (attribute.kind !== "word") return invalidFilter("a filter starts with an attribute")
      const named = attributeOf(attribute.text)
      if (named === undefined) return invalidFilter(`'${attribute.text.slice(0, 64)}' cannot be filtered on`)
      if (operator?.kind !== "word" || operator.text.toLowerCase() !== "eq") return invalidFilter(`only 'eq' compares ${named}`)
      if (value?.kind !== "string") return invalidFilter(`${named} is compared with a quoted string`)
      conditions.push({ attribute: named, value: value.text })
      const joint = found[i + 3]
      if (joint === undefined) return Result.succeed(conditions)
      if (joint.kind !== "word" || joint.text.toLowerCase() !== "and") return invalidFilter("conditions are joined by 'and' only")
    }
  })
