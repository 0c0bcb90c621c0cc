import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { parseScimFilter } from "../../src/domain/ScimFilter.js"

const refusalOf = (filter: string) => {
  const parsed = parseScimFilter(filter)
  if (Result.isSuccess(parsed)) throw new Error(`'${filter}' was accepted`)
  return parsed.failure
}

describe("parseScimFilter", () => {
  it("reads the four attributes with eq, in any case, URN-qualified or not, joined by and", () => {
    expect(parseScimFilter('userName eq "Jane@Example.com"')).toEqual(Result.succeed([{ attribute: "userName", value: "Jane@Example.com" }]))
    expect(parseScimFilter('USERNAME EQ "x"')).toEqual(Result.succeed([{ attribute: "userName", value: "x" }]))
    expect(parseScimFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "x"')).toEqual(Result.succeed([{ attribute: "userName", value: "x" }]))
    expect(parseScimFilter('  externalId eq "00u1"  and emails.value eq "a@b.c" AND id eq "7d1f7c9e-2f55-4a0a-9a0e-5d1d6e0f0a11"')).toEqual(
      Result.succeed([
        { attribute: "externalId", value: "00u1" },
        { attribute: "emails.value", value: "a@b.c" },
        { attribute: "id", value: "7d1f7c9e-2f55-4a0a-9a0e-5d1d6e0f0a11" }
      ])
    )
  })

  it("reads JSON string escapes, and keeps words inside strings as text", () => {
    expect(parseScimFilter('userName eq "say \\"and\\" or \\u0041"')).toEqual(Result.succeed([{ attribute: "userName", value: 'say "and" or A' }]))
    expect(parseScimFilter('userName eq "a or b"')).toEqual(Result.succeed([{ attribute: "userName", value: "a or b" }]))
  })

  it("refuses everything else with 400 invalidFilter", () => {
    for (
      const filter of [
        "",
        "   ",
        'userName eq "a" or userName eq "b"',
        'userName co "a"',
        'userName sw "a"',
        "userName pr",
        'title eq "x"',
        'emails eq "a@b.c"',
        'emails[value eq "a@b.c"]',
        '(userName eq "a")',
        'not (userName eq "a")',
        "userName eq a",
        "userName eq true",
        "id eq 12",
        'userName eq "a" and',
        'userName eq "a" userName eq "b"',
        'userName eq "unterminated',
        'userName eq "a\u0001"',
        // Escaped control characters: NUL, which PostgreSQL's text refuses, ESC, a bidirectional override.
        'userName eq "a\\u0000"',
        'externalId eq "\\u0000"',
        'emails.value eq "a@b.c" and externalId eq "x\\u001b[31m"',
        'userName eq "\\u202e"'
      ]
    ) {
      const refusal = refusalOf(filter)
      expect(refusal).toMatchObject({ status: 400, scimType: "invalidFilter" })
      expect(refusal.detail).toContain("the supported filters are")
    }
  })
})
