import { PublicApi } from "@portfolio/domain"
import { publicOpenApiDocument } from "@portfolio/domain/OpenApiDocument"
import { Validator } from "@seriousme/openapi-schema-validator"
import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { allowListOf } from "../../src/domain/AllowList.js"

const baseUrl = "https://api.example.test/api/v1"
const doc = publicOpenApiDocument({ baseUrl, rateLimitPerMinute: 180, anonymousRateLimitPerMinute: 60 })

const allOperations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ path, method, operation }))
)
/** The SCIM operations take a SCIM token and answer SCIM errors (docs/scim.md): checked apart from the others. */
const isScim = (operation: any) => operation.tags.includes("SCIM 2.0")
const operations = allOperations.filter(({ operation }) => !isScim(operation))
const scimOperations = allOperations.filter(({ operation }) => isScim(operation))

describe("published OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const validator = new Validator()
    const result = await validator.validate(doc)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })

  it("documents exactly the routed endpoints, relative to the base URL given in servers", () => {
    expect(doc.servers).toEqual([{ url: baseUrl, description: "Public base URL (includes /api/v1)." }])
    const documented = allOperations.map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort()
    const routed = allowListOf(PublicApi).routes
      .map((r) => `${r.method} ${r.path.slice("/api/v1".length).replace(/:(\w+)/g, "{$1}")}`)
      .sort()
    expect(documented).toEqual(routed)
    expect(documented).toHaveLength(26)
    expect(scimOperations).toHaveLength(11)
    for (const path of Object.keys(doc.paths)) expect(path.startsWith("/api/")).toBe(false)
  })

  it("tags every operation with its scope; the bearer PAT everywhere, partners' client credentials wherever no tenant-admin is required", () => {
    const routes = new Map(allowListOf(PublicApi).routes.map((r) => [r.operationId, r]))
    expect(doc.components.securitySchemes.pat).toMatchObject({ type: "http", scheme: "bearer" })
    expect(doc.components.securitySchemes.oauth2).toMatchObject({
      type: "oauth2",
      flows: { clientCredentials: { tokenUrl: `${baseUrl}/oauth/token`, scopes: { read: expect.any(String), write: expect.any(String) } } }
    })
    expect(doc.security).toEqual([{ pat: [] }, { oauth2: [] }])
    for (const { operation } of operations) {
      const route = routes.get(operation.operationId)!
      const scopeTags = operation.tags.filter((t: string) => t.startsWith("scope:"))
      expect(scopeTags, operation.operationId).toEqual([`scope:${route.scope}`])
      expect(operation.security, operation.operationId).toEqual(
        route.requiredRole._tag === "Some" ? [{ pat: [] }] : [{ pat: [] }, { oauth2: [route.scope] }]
      )
    }
    expect(operations.find((o) => o.operation.operationId === "invitations.listInvitations")!.operation.security).toEqual([{ pat: [] }])
    // A SCIM token has no scope, and nothing but a SCIM token opens SCIM: the SDKs leave these out.
    expect(doc.components.securitySchemes.scimToken).toMatchObject({ type: "http", scheme: "bearer" })
    for (const { operation } of scimOperations) {
      expect(routes.get(operation.operationId)!.credential, operation.operationId).toEqual(Option.some("scim"))
      expect(operation.tags.filter((t: string) => t.startsWith("scope:")), operation.operationId).toEqual([])
      expect(operation.security, operation.operationId).toEqual([{ scimToken: [] }])
      expect(operation["x-sdk"], operation.operationId).toBe(false)
    }
    expect(operations.find((o) => o.operation.operationId === "invitations.createInvitation")!.operation.tags).toContain("scope:write")
  })

  it("documents 401 and 429 on every operation, with Retry-After and the rate-limit headers", () => {
    for (const { operation } of operations) {
      const { responses } = operation
      expect(responses["401"].content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem.UNAUTHENTICATED" })
      expect(responses["429"].content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem.RATE_LIMITED" })
      expect(Object.keys(responses["429"].headers).sort()).toEqual(["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"])
      for (const [status, response] of Object.entries(responses as Record<string, any>)) {
        expect(Object.keys(response.headers), `${operation.operationId} ${status}`).toEqual(
          expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"])
        )
        if (Number(status) >= 400) expect(Object.keys(response.content), `${operation.operationId} ${status}`).toEqual(["application/problem+json"])
      }
    }
    for (const { operation } of scimOperations) {
      const { responses } = operation
      for (const status of ["401", "403", "429", "503"]) {
        expect(responses[status].content, `${operation.operationId} ${status}`).toEqual({ "application/scim+json": { schema: { $ref: "#/components/schemas/ScimError" } } })
      }
      expect(Object.keys(responses["429"].headers).sort()).toEqual(["Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"])
      for (const [status, response] of Object.entries(responses as Record<string, any>)) {
        expect(Object.keys(response.headers), `${operation.operationId} ${status}`).toEqual(
          expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"])
        )
        if (Number(status) >= 400) expect(Object.keys(response.content), `${operation.operationId} ${status}`).toEqual(["application/scim+json"])
      }
    }
    expect(doc.components.headers["X-RateLimit-Reset"].schema).toEqual({ type: "integer" })
  })

  it("answers schema failures with Problem.INVALID_REQUEST, never Effect's decode error", () => {
    const text = JSON.stringify(doc)
    expect(text).not.toContain("HttpApiDecodeError")
    expect(doc.components.schemas.Problem.required).toEqual(["type", "title", "status", "detail", "instance", "errorCode"])
    for (const { operation } of operations) {
      const bad = operation.responses["400"].content["application/problem+json"].schema
      const refs = bad.anyOf?.map((s: any) => s.$ref) ?? [bad.$ref]
      expect(refs).toContain("#/components/schemas/Problem.INVALID_REQUEST")
    }
  })

  it("carries a curl and a TypeScript fetch sample per operation but SCIM's, against the base URL", () => {
    for (const { operation } of scimOperations) expect(operation["x-codeSamples"], operation.operationId).toBeUndefined()
    for (const { method, operation, path } of operations) {
      const samples = operation["x-codeSamples"]
      expect(samples.map((s: any) => `${s.lang}/${s.label}`)).toEqual(["Shell/curl", "TypeScript/fetch"])
      expect(samples[0].source).toContain(`"${baseUrl}${path.split("{")[0]}`)
      expect(samples[0].source).not.toMatch(/\{\w+\}/)
      expect(samples[0].source).toContain("Authorization: Bearer $PORTFOLIO_TOKEN")
      if (method !== "get") expect(samples[0].source).toContain(`-X ${method.toUpperCase()}`)
      expect(samples[1].source).toContain(`method: "${method.toUpperCase()}"`)
    }
    const search = operations.find((o) => o.operation.operationId === "functions.searchFunctions")!.operation
    expect(search["x-codeSamples"][0].source).toBe(
      `curl -sS "${baseUrl}/referentiel/functions/search?q=billing" \\\n  -H "Authorization: Bearer $PORTFOLIO_TOKEN"`
    )
    const invite = operations.find((o) => o.operation.operationId === "invitations.createInvitation")!.operation
    expect(invite["x-codeSamples"][0].source).toBe(
      `curl -sS -X POST "${baseUrl}/tenant/invitations" \\\n  -H "Authorization: Bearer $PORTFOLIO_TOKEN" \\\n  -H "Content-Type: application/json" \\\n  -d '{"email":"jane.doe@example.com","arbRole":"architect"}'`
    )
  })

  it("records the decisions users must know in info.description", () => {
    const description: string = doc.info.description
    for (const fact of [
      "`ap_pat_` followed by 30 random base62 characters and 6 base62 characters of the CRC32 checksum",
      "90 days by default, 366 days at most",
      "Sliding window of 60 seconds: 180 requests per token, 600 per partner client",
      `\`POST ${baseUrl}/oauth/token\``,
      `\`${baseUrl}/.well-known/jwks.json\``,
      "`invalid_client` (401 with `WWW-Authenticate: Basic`",
      "counted per client address, 60 per window",
      "`Retry-After` in seconds, equal to `X-RateLimit-Reset` minus now, rounded up, at least 1",
      "| 403 | `INSUFFICIENT_SCOPE` | Insufficient scope |",
      "| 429 | `RATE_LIMITED` | Too many requests |",
      "`limit` defaults to 50; values above 200 are capped to 200; values below 1 give 400",
      "query parameter `q`",
      "`ACTIVE`, `PLANNED`, `DEPRECATED`, `RETIRED`",
      `${baseUrl}/errors/<slug>`
    ]) {
      expect(description).toContain(fact)
    }
  })

  it("documents the change-list limit as an integer with its default", () => {
    const changes = operations.find((o) => o.operation.operationId === "applications.listApplicationChanges")!.operation
    expect(changes.parameters.find((p: any) => p.name === "limit").schema).toEqual({ type: "integer", minimum: 1, default: 50, examples: [50] })
  })

  it("documents limit, cursor and the Link header on every list, and on nothing else", () => {
    const lists = [
      "applications.listApplications",
      "applications.listApplicationChanges",
      "functions.listFunctionsFlat",
      "functions.searchFunctions",
      "functions.listFunctionsByApplication",
      "invitations.listInvitations",
      "invitations.listMembers"
    ]
    for (const { operation } of operations) {
      const parameters = (operation.parameters ?? []) as Array<any>
      const limit = parameters.find((p) => p.name === "limit")
      const cursor = parameters.find((p) => p.name === "cursor")
      const link = operation.responses["200"]?.headers?.Link
      if (!lists.includes(operation.operationId)) {
        expect({ limit, cursor, link }, operation.operationId).toEqual({ limit: undefined, cursor: undefined, link: undefined })
        continue
      }
      expect(limit, operation.operationId).toMatchObject({ in: "query", required: false, schema: { type: "integer", minimum: 1 } })
      expect(cursor, operation.operationId).toMatchObject({ in: "query", required: false, schema: { type: "string" } })
      expect(cursor.description).toContain("Link")
      expect(link, operation.operationId).toMatchObject({ schema: { type: "string" }, description: expect.stringContaining('rel="next"') })
    }
    const applications = operations.find((o) => o.operation.operationId === "applications.listApplications")!.operation
    expect(applications.parameters.map((p: any) => p.name)).toEqual(["data_class", "criticality", "regulation", "status", "limit", "cursor"])
    expect(applications.parameters.find((p: any) => p.name === "limit").description).toContain("capped to 1000")
    expect(doc.info.description).toContain("`cursor` (alone: pages of 100)")
  })

  it("publishes the referential's events as webhooks, das.submitted carrying the DAS record", () => {
    const webhooks = doc.webhooks as Record<string, any>
    expect(Object.keys(webhooks)).toEqual(["application.created", "application.updated", "das.submitted"])
    const submitted = webhooks["das.submitted"].post
    expect(submitted.description).toContain("`events.referential.das.submitted`")
    expect(submitted.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/DasSubmitted" })
    const schemas = doc.components.schemas as Record<string, any>
    expect(schemas.DasSubmitted.properties).toMatchObject({ type: { enum: ["das.submitted"] }, data: { $ref: "#/components/schemas/Das" } })
    expect(schemas.Das.properties.status.enum).toEqual(["DRAFT", "SUBMITTED"])
    expect(schemas.DasContent).toMatchObject({ type: "object", description: expect.stringContaining("65536 bytes") })
  })
})
