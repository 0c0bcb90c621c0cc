import { describe, expect, it } from "@effect/vitest"
import { PatJustification, PatMaxDays, Scope, SsoConnectionRequest, WebhookDescription, WebhookEventKind, WebhookUrl } from "@portfolio/domain"
import { Result, Schema } from "effect"
import { decodeForm, firstField, firstMessage, NumberFromText } from "../../src/adapters/http/FormMessages.js"

// The forms' rules as the routes declare them (Routes.ts, WebhookRoutes.ts, PartnerRoutes.ts).
const PatRequestForm = Schema.Struct({
  scope: Scope,
  days: NumberFromText.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: PatMaxDays }, { message: `the lifetime must be 1 to ${PatMaxDays} days` }))),
  justification: PatJustification
})
const WebhookForm = Schema.Struct({ url: WebhookUrl, description: WebhookDescription, events: Schema.Array(WebhookEventKind) })
const GraceForm = Schema.Struct({ graceHours: NumberFromText.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 168 }))) })

const refused = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, input: unknown) => {
  const result = decodeForm(schema)(input)
  if (!Result.isFailure(result)) throw new Error("the form was accepted")
  return { message: firstMessage(result.failure), field: firstField(result.failure) }
}

const justification = "Needed for the nightly export of the portfolio"

describe("the forms' messages", () => {
  it("words the first thing refused as the API does, quoting the value, and names its field", () => {
    expect(refused(PatRequestForm, { scope: "admin", days: "30", justification })).toEqual({ message: "Expected \"read\", actual \"admin\"", field: "scope" })
    expect(refused(PatRequestForm, { scope: "read", days: "", justification })).toEqual({ message: "Unable to decode \"\" into a number", field: "days" })
    expect(refused(PatRequestForm, { scope: "read", days: "1.5", justification })).toEqual({ message: "Expected an integer, actual 1.5", field: "days" })
    expect(refused(PatRequestForm, { scope: "read", days: "0", justification })).toEqual({ message: `the lifetime must be 1 to ${PatMaxDays} days`, field: "days" })
    expect(refused(PatRequestForm, { scope: "read", days: "30", justification: "short" }).message).toBe(
      "the justification must be 20 to 2000 characters long once trimmed (got 5)"
    )
    expect(refused(WebhookForm, { url: "", description: "", events: [] })).toEqual({ message: "Expected a string at least 1 character(s) long, actual \"\"", field: "url" })
    expect(refused(WebhookForm, { url: "nope", description: "", events: [] }).message).toBe("must be an absolute URL")
    expect(refused(WebhookForm, { url: "https://hooks.example/x", description: "x".repeat(501), events: [] }).message).toBe(
      `Expected a string at most 500 character(s) long, actual "${"x".repeat(501)}"`
    )
    expect(refused(WebhookForm, { url: "https://hooks.example/x", description: "two\nlines", events: [] }).message).toBe(
      "must be one line without control or bidirectional formatting characters (found U+000A at character 4)"
    )
    expect(refused(WebhookForm, { url: "https://hooks.example/x", description: "", events: ["application.created", "bogus"] })).toEqual({
      message: "Expected \"application.created\", actual \"bogus\"",
      field: "events"
    })
    expect(refused(GraceForm, { graceHours: "200" }).message).toBe("Expected a number between 0 and 168, actual 200")
  })

  it("names the field of a refused single sign-on connection", () => {
    const connection = { issuer: "https://login.example.com", clientId: "client", clientSecret: "secret", domains: ["example.com"] }
    const fieldOf = (input: object) => {
      const result = Schema.decodeUnknownResult(SsoConnectionRequest)(input)
      return Result.isFailure(result) ? firstField(result.failure) : "accepted"
    }
    expect(fieldOf({ ...connection, roleClaim: "bad claim" })).toBe("roleClaim")
    expect(fieldOf({ ...connection, emailVerifiedClaim: "" })).toBe("emailVerifiedClaim")
    expect(fieldOf({ ...connection, domains: ["Bad"] })).toBe("domains")
  })
})
