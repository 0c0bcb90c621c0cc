import { describe, expect, it } from "@effect/vitest"
import { Result, Schema, SchemaIssue } from "effect"
import { decodeIssues, effect3KeyWords } from "../../src/http/SchemaMessages.js"

const Body = Schema.Struct({
  code: Schema.String.pipe(Schema.check(Schema.isMinLength(1))),
  status: Schema.Literals(["ACTIVE", "RETIRED"]),
  days: Schema.Number.pipe(Schema.check(Schema.isInt()))
})

const issueOf = (input: unknown, options: Schema.MakeOptions["parseOptions"] = {}) => {
  const result = Schema.decodeUnknownResult(Body)(input, { errors: "all", onExcessProperty: "error", ...options })
  if (!Result.isFailure(result)) throw new Error("accepted")
  return result.failure.issue
}

describe("decodeIssues", () => {
  it("words each refusal as Effect 3 did, at its path, quoting what was refused", () => {
    expect(decodeIssues(issueOf({ code: "", status: "GONE", days: 1.5, extra: 1 }, { reportInput: true }))).toEqual([
      { path: ["extra"], message: "is unexpected, expected: \"code\" | \"status\" | \"days\"" },
      { path: ["code"], message: "Expected a string at least 1 character(s) long, actual \"\"" },
      { path: ["status"], message: "Expected \"ACTIVE\", actual \"GONE\"" },
      { path: ["status"], message: "Expected \"RETIRED\", actual \"GONE\"" },
      { path: ["days"], message: "Expected an integer, actual 1.5" }
    ])
    expect(decodeIssues(issueOf({ status: "ACTIVE", days: 1 }))).toEqual([{ path: ["code"], message: "is missing" }])
  })
})

describe("effect3KeyWords", () => {
  it("words absent and unknown keys as Effect 3 did, and the rest as Effect 4 does", () => {
    const format = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook: effect3KeyWords })
    const messages = format(issueOf({ code: "", status: "ACTIVE", extra: 1 })).issues.map(({ message }) => message)
    expect(messages).toEqual(["is unexpected", "Expected a value with a length of at least 1", "is missing"])
  })
})
