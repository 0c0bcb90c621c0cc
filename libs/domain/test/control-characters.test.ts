import { Result, Schema, SchemaIssue } from "effect"
import { describe, expect, it } from "vitest"
import {
  ApplicationInput,
  CreateSubscriptionRequest,
  Das,
  DasInput,
  DenyPatRequest,
  Email,
  FailedSignInLookup,
  FunctionInput,
  NewPatRequest,
  PatRequest,
  SignInCheckRequest,
  SsoMemberRequest,
  UpdateSubscriptionRequest,
  WebhookSubscription
} from "../src/index.js"

/**
 * Free text refuses the characters a terminal or a text view acts on (docs/security.md, "Control
 * characters"), as the 400 of the field that holds them: the issues below are what an HttpApi
 * answers in `detail` (`<path>: <message>`).
 */
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()
const issues = (schema: Schema.Decoder<unknown>, input: unknown) =>
  Result.match(Schema.decodeUnknownResult(schema)(input), {
    onFailure: (error) => formatIssues(error.issue).issues.map((issue) => `${(issue.path ?? []).join(".")}: ${issue.message}`),
    onSuccess: () => []
  })

/** The class's name: `DenyPatRequest`. */
const nameOf = (schema: Schema.Decoder<unknown>) => (schema as unknown as { readonly identifier: string }).identifier

const justification = "Nightly export of the application list to the CMDB."
const newPatRequest = {
  tenantId: "10000000-0000-4000-8000-000000000001",
  userSub: "sub-1",
  email: "ana@acme.example",
  role: "viewer",
  scope: "read",
  justification
}

/** What each finding of issue 25 put in a field, and the bidirectional override of "Trojan Source". */
const Hostile = ["\r\u001b[2K\u001b[1A", "\u001b]0;pwned\u0007", "\u009b31m", "\u202egnp.exe", "\u2066x\u2069", "\u007f", "\u2028"]

/** Each free-text field of the contracts, with a valid request to put a value in. */
const OneLine: ReadonlyArray<readonly [string, Schema.Decoder<unknown>, (text: string) => unknown]> = [
  ["reason", DenyPatRequest, (reason) => ({ reason })],
  ["description", CreateSubscriptionRequest, (description) => ({ url: "https://hooks.acme.example/in", description })],
  ["description", UpdateSubscriptionRequest, (description) => ({ description })],
  ["name", ApplicationInput, (name) => ({ name })],
  ["regulations", ApplicationInput, (regulations) => ({ name: "CRM", regulations })],
  ["roleAssignments", ApplicationInput, (text) => ({ name: "CRM", roleAssignments: `TECH_LEAD:${text}` })],
  ["contactIT", ApplicationInput, (contactIT) => ({ name: "CRM", contactIT })],
  ["contactMetier", ApplicationInput, (contactMetier) => ({ name: "CRM", contactMetier })],
  ["code", FunctionInput, (code) => ({ code: `F${code}`, name: "Billing" })],
  ["name", FunctionInput, (name) => ({ code: "F1", name: `Billing${name}` })],
  ["title", DasInput, (title) => ({ applicationCode: "CRM", title: `Dossier${title}` })],
  ["userSub", SsoMemberRequest, (userSub) => ({ userSub: `sub${userSub}`, email: "ana@acme.example" })]
]

const Paragraphs: ReadonlyArray<readonly [string, Schema.Decoder<unknown>, (text: string) => unknown]> = [
  ["justification", NewPatRequest, (text) => ({ ...newPatRequest, justification: `${justification}${text}${justification}` })],
  ["description", ApplicationInput, (description) => ({ name: "CRM", description })],
  ["description", FunctionInput, (description) => ({ code: "F1", name: "Billing", description })]
]

describe("free text at the contract", () => {
  it.each([...OneLine, ...Paragraphs].map(([field, schema, build]) => [`${nameOf(schema)}.${field}`, field, schema, build] as const))(
    "%s refuses control and bidirectional formatting characters with a 400 naming the field and the character, not the text",
    (_, field, schema, build) => {
      for (const hostile of Hostile) {
        // An optional field's 400 also says that the value is not null nor absent, as for any refusal.
        const found = issues(schema, build(`ok${hostile}ok`))
        expect(found.filter((issue) => !/^\w+: Expected (null|undefined), actual /.test(issue)), JSON.stringify(hostile)).toEqual([
          expect.stringMatching(new RegExp(`^${field}: must .*control or bidirectional formatting characters.*\\(found U\\+[0-9A-F]{4} at character \\d+\\)$`))
        ])
      }
      expect(issues(schema, build("ok Équipe Café — 日本語 العربية 👩‍💻 ok"))).toEqual([])
    }
  )

  it("names the first character refused and its place", () => {
    expect(issues(DenyPatRequest, { reason: "No.\u001b[1A" })).toEqual([
      "reason: must be one line without control or bidirectional formatting characters (found U+001B at character 4)"
    ])
    expect(issues(NewPatRequest, { ...newPatRequest, justification: `${justification}\u202e` })).toEqual([
      `justification: must not contain control or bidirectional formatting characters other than tab and line breaks (found U+202E at character ${justification.length + 1})`
    ])
  })

  it("keeps tab, line feed and CR LF in a justification or a long description, and refuses them in one-line text", () => {
    for (const breaks of ["\n", "\r\n", "\t", "\n\n"]) {
      for (const [, schema, build] of Paragraphs) expect(issues(schema, build(`ok${breaks}ok`)), JSON.stringify(breaks)).toEqual([])
      for (const [field, schema, build] of OneLine) expect(issues(schema, build(`ok${breaks}ok`))[0], field).toMatch(/found U\+000[9AD]/)
    }
    // A lone CR returns the cursor over the line: refused everywhere.
    for (const [field, schema, build] of Paragraphs) expect(issues(schema, build("ok\rok"))[0], field).toMatch(/found U\+000D/)
  })

  it("trims surrounding whitespace where it did, rather than refusing it", () => {
    const decoded = Schema.decodeUnknownSync(NewPatRequest)({ ...newPatRequest, justification: `\r\n\t ${justification}\r\n` })
    expect(decoded.justification).toBe(justification)
    expect(Schema.decodeUnknownSync(DenyPatRequest)({ reason: " Not needed.\n" }).reason).toBe("Not needed.")
  })
})

describe("what was stored before", () => {
  it("still reads: only new input is refused, the records answered keep any text", () => {
    const at = "2026-07-01T10:00:00.000Z"
    const text = "\u001b]0;pwned\u0007\r\u202e"
    expect(Schema.decodeUnknownSync(Das)({ id: "44444444-0000-4000-8000-000000000001", applicationCode: "CRM", title: text, content: null, status: "DRAFT", createdAt: at, submittedBy: null, submittedAt: null }).title).toBe(text)
    expect(Schema.decodeUnknownSync(WebhookSubscription)({
      id: "55555555-0000-4000-8000-000000000001", tenantId: newPatRequest.tenantId, url: "https://hooks.acme.example/in", description: text, events: [], allEvents: true,
      state: "enabled", disabledReason: null, consecutiveFailures: 0, previousSecretExpiresAt: null, createdAt: at, updatedAt: at
    }).description).toBe(text)
    expect(Schema.decodeUnknownSync(PatRequest)({
      ...newPatRequest, id: "66666666-0000-4000-8000-000000000001", days: 90, justification: text, status: "denied", createdAt: at, expiresAt: at, decidedAt: at,
      decidedBy: { userSub: "operator:ops", email: null, role: "operator" }, reason: text, patId: null
    }).reason).toBe(text)
  })
})

describe("e-mails at the contract", () => {
  it("refuse control characters by their grammar: the e-mail of issue 25 and any control around or inside an address", () => {
    for (const email of ["\u001b]0;pwned\u0007\u001b[31mattacker\u001b[0m", "ana@acme.example\r", "ana\u001b@acme.example", "ana@acme.example\n", "ana@acme.example\u202e", "\u0085ana@acme.example"]) {
      expect(Schema.is(Email)(email), JSON.stringify(email)).toBe(false)
      for (const schema of [SignInCheckRequest, FailedSignInLookup] as ReadonlyArray<Schema.Decoder<unknown>>) {
        expect(issues(schema, { email, password: "secret" })[0], JSON.stringify(email)).toMatch(/^email: /)
      }
    }
    expect(Schema.is(Email)("ana@acme.example")).toBe(true)
  })
})
