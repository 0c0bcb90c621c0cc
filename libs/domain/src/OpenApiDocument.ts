import { HttpApi, OpenApi } from "effect/http-api"
import { Context, Option, Schema } from "effect"
import { PatDefaultDays, PatMaxDays } from "./admin/GatewayAdminApi.js"
import { RequiredRole, RequiredScope } from "./Annotations.js"
import { ApplicationStatus } from "./Application.js"
import { ChangeLimitCap, ChangeLimitDefault } from "./ChangeLog.js"
import { PageLimitDefault, PageLimitMax } from "./Page.js"
import { ApplicationCreated, ApplicationCreatedSubject, ApplicationUpdated, ApplicationUpdatedSubject } from "./events/ApplicationEvents.js"
import { DasSubmitted, DasSubmittedSubject } from "./events/DasEvents.js"
import { codeSamples } from "./OpenApiCodeSamples.js"
import { effect3ComponentNames, effect3ComponentOrder, effect3Document, effect3Schema } from "./OpenApiAsPublished.js"
import { type ErrorCode, ProblemCatalog, problemContentType } from "./Problem.js"
import { PartnerClientIdPrefix } from "./PartnerClients.js"
import { ProblemExplanations } from "./ProblemExplanations.js"
import { PublicApi, PublicApiPrefix } from "./PublicApi.js"
import { RequiredCredential, ScimMediaType, ScimPath, ScimTokensPerTenantMax } from "./Scim.js"
import type { Scope } from "./Role.js"

/**
 * The published OpenAPI 3.1 document of the public API: `OpenApi.fromApi(PublicApi)` finished by
 * one pure function, so the gateway, the SDK generators and the tests all see the same document.
 */
export interface OpenApiDocumentOptions {
  /** Public base URL, /api/v1 included; paths in the document are relative to it. */
  readonly baseUrl: string
  readonly rateLimitPerMinute?: number
  readonly anonymousRateLimitPerMinute?: number
  readonly partnerRateLimitPerMinute?: number
  readonly scimRateLimitPerMinute?: number
}

const JsonMedia = "application/json"

const rateLimitHeaderRefs = {
  "X-RateLimit-Limit": { $ref: "#/components/headers/X-RateLimit-Limit" },
  "X-RateLimit-Remaining": { $ref: "#/components/headers/X-RateLimit-Remaining" },
  "X-RateLimit-Reset": { $ref: "#/components/headers/X-RateLimit-Reset" }
}

const componentHeaders = {
  "X-RateLimit-Limit": {
    description: "Requests allowed in any 60-second window for this token (or, without a valid token, for this client address).",
    schema: { type: "integer", minimum: 1 }
  },
  "X-RateLimit-Remaining": {
    description: "Requests still allowed in the current 60-second window.",
    schema: { type: "integer", minimum: 0 }
  },
  "X-RateLimit-Reset": {
    description: "UTC epoch seconds at which the oldest counted request leaves the window, so that one more request becomes possible; now when the window is empty.",
    schema: { type: "integer" }
  },
  "Retry-After": {
    description: "Seconds to wait before retrying: X-RateLimit-Reset minus now, rounded up, at least 1 (on 429); a short back-off on 503.",
    schema: { type: "integer", minimum: 1 }
  }
}

const problemSchema = {
  type: "object",
  description: "RFC 9457 problem details, with the stable `errorCode` extension member.",
  required: ["type", "title", "status", "detail", "instance", "errorCode"],
  properties: {
    type: { type: "string", format: "uri", description: "`{errors_url}/<slug>`; the page at `{base_url}/errors/<slug>` explains it." },
    title: { type: "string", description: "Short name of the error, for humans." },
    status: { type: "integer", description: "HTTP status." },
    detail: { type: "string", description: "What went wrong with this request." },
    instance: { type: "string", description: "Path of the request." },
    errorCode: { type: "string", enum: Object.keys(ProblemCatalog), description: "Stable UPPER_SNAKE code; compare this, never the title." }
  }
}

const problemResponse = (errorCode: ErrorCode, description: string, schemaRef: string, extraHeaders: Record<string, unknown> = {}) => ({
  description: `${ProblemCatalog[errorCode].title} (\`${errorCode}\`). ${description}`,
  headers: { ...extraHeaders, ...rateLimitHeaderRefs },
  content: { [problemContentType]: { schema: { $ref: schemaRef } } }
})

const errorsTable = (baseUrl: string) =>
  [
    "| Status | errorCode | Title | Meaning |",
    "|---|---|---|---|",
    ...Object.entries(ProblemCatalog)
      // Codes of the administration APIs only: no public endpoint answers them.
      .filter(([code]) => code !== "CONFLICT" && code !== "MEMBER_REMOVED")
      .map(([code, row]) => `| ${row.status} | \`${code}\` | ${row.title} | ${ProblemExplanations[code as ErrorCode]} [More](${baseUrl}/errors/${row.slug}) |`)
  ].join("\n")

const describeApi = (options: Required<OpenApiDocumentOptions>) => `Referential of applications and business functions, and tenant user provisioning.

All paths are relative to the base URL \`${options.baseUrl}\`. The prefix \`/api/v1\` is stable: changes within v1 are additive and every added field has a default; a breaking change would get \`/api/v2\`, served beside v1 for 6 months. Only the endpoints listed here are public: any other path or method answers 404 \`NOT_FOUND\`, even with a valid token.

## Authentication

Send a personal access token (PAT) in every request: \`Authorization: Bearer <PAT>\`.

- Format: \`ap_pat_\` followed by 30 random base62 characters and 6 base62 characters of the CRC32 checksum of those 30 characters (alphabet \`0-9A-Za-z\`, checksum big-endian, left-padded with \`0\`). Secret scanners can recognise a token offline, and a mistyped token is refused at once.
- A token carries the scope \`read\` or \`write\` (\`write\` includes \`read\`); each operation is tagged \`scope:read\` or \`scope:write\`. A token with too small a scope gets 403 \`INSUFFICIENT_SCOPE\` (title \`Insufficient scope\`) whose \`detail\` names the token's scope and the scope the request required.
- The provisioning endpoints (\`/tenant/invitations...\`) also require the token's holder to be \`tenant-admin\` in the tenant: any other role gets 403 \`INSUFFICIENT_SCOPE\`.
- Lifetime: set when the token is issued, ${PatDefaultDays} days by default, ${PatMaxDays} days at most. A missing, malformed, unknown, revoked or expired token gets 401 \`UNAUTHENTICATED\`. Tokens are stored only as SHA-256 hashes and never logged; logs show their first 10 characters.
- Tokens are obtained through the self-service workflow: a developer files a justified request, a tenant-admin approves it and hands the token over through a secure channel.

### Partners: OAuth 2.0 client credentials

Long-term partners get a client (\`client_id\` \`${PartnerClientIdPrefix}<name>-<random suffix>\`, and a secret shown once) from an operator or a tenant-admin, and exchange it for a short-lived access token (security scheme \`oauth2\`, RFC 6749 section 4.4):

- \`POST ${options.baseUrl}/oauth/token\`, \`Content-Type: application/x-www-form-urlencoded\`, \`grant_type=client_credentials\`, the client authenticated by HTTP Basic (\`client_id:client_secret\`, each form-encoded) or by \`client_id\` and \`client_secret\` in the body, and optionally \`scope\` (\`read\` or \`write\`, never beyond the client's; the client's own when absent).
- It answers \`{"access_token", "token_type": "Bearer", "expires_in": 300, "scope"}\` with \`Cache-Control: no-store\`; there is no refresh token: ask again. Errors follow RFC 6749 section 5.2, \`{"error", "error_description"}\`: \`invalid_request\` (400), \`invalid_client\` (401 with \`WWW-Authenticate: Basic\` when the client used Basic or sent no credentials, 400 for credentials in the body), \`unsupported_grant_type\` (400), \`invalid_scope\` (400).
- The access token is a JWT (ES256 or EdDSA) sent as \`Authorization: Bearer <token>\`: it acts in the client's tenant with its scope, is refused on the provisioning endpoints (403 \`INSUFFICIENT_SCOPE\`: a partner is not a tenant-admin), and is 401 \`UNAUTHENTICATED\` once expired. The public keys that verify it are at \`${options.baseUrl}/.well-known/jwks.json\`.
- The token endpoint is counted per client address like every call without a token; the calls made with a partner's tokens are counted per client, ${options.partnerRateLimitPerMinute} per 60-second window.

### Identity tools: SCIM 2.0

Okta, Microsoft Entra ID and other identity tools provision and deprovision the tenant's members through SCIM 2.0 (RFC 7643, RFC 7644) at \`${options.baseUrl}${ScimPath}\` (the operations tagged \`SCIM 2.0\`), with a SCIM token: \`ap_scim_\` followed by 30 random base62 characters and their 6-character CRC32 checksum, made by a tenant-admin in the console (at most ${ScimTokensPerTenantMax} active per tenant), shown once, revocable, without expiry. A SCIM token is accepted there only, and only a SCIM token is: anything else gets 403. Bodies and answers are \`${ScimMediaType}\` (\`application/json\` bodies are read too); every error under \`${ScimPath}\` is a SCIM error (RFC 7644 section 3.12), \`{"schemas": ["urn:ietf:params:scim:api:messages:2.0:Error"], "status", "scimType", "detail"}\`, not problem+json. Calls are counted per SCIM token, ${options.scimRateLimitPerMinute} per 60-second window. Groups are not supported: a User's role is its \`roles\` value, one of the six roles. These operations are not in the SDKs (\`x-sdk: false\`).

## Rate limits

- Sliding window of 60 seconds: ${options.rateLimitPerMinute} requests per token, ${options.partnerRateLimitPerMinute} per partner client, ${options.scimRateLimitPerMinute} per SCIM token. Requests without a valid token (and to this reference, the OpenAPI document and the error pages) are counted per client address, ${options.anonymousRateLimitPerMinute} per window; past that limit they get 429 instead of 401.
- Every response under \`/api/**\` carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (UTC epoch seconds at which the oldest counted request leaves the window, so one more request becomes possible).
- A request over the limit gets 429 \`RATE_LIMITED\` with \`Retry-After\` in seconds, equal to \`X-RateLimit-Reset\` minus now, rounded up, at least 1. Refused requests are not counted. Retry with exponential back-off honouring \`Retry-After\`.

## Errors

Every error is \`${problemContentType}\` (RFC 9457) with \`type\`, \`title\`, \`status\`, \`detail\`, \`instance\` (the request path) and \`errorCode\`, a stable code to compare (never the title). Each \`type\` URI's slug is explained at \`${options.baseUrl}/errors/<slug>\`.

${errorsTable(options.baseUrl)}

## Rules worth knowing

- Request bodies are limited to 1 MiB (413 \`PAYLOAD_TOO_LARGE\`). A service that is down or does not answer in time gives 503 \`UNAVAILABLE\` with \`Retry-After\`.
- Application \`status\` is one of ${ApplicationStatus.literals.map((s) => `\`${s}\``).join(", ")}.
- \`GET /referentiel/applications/{code}/changes\`: \`limit\` defaults to ${ChangeLimitDefault}; values above ${ChangeLimitCap} are capped to ${ChangeLimitCap}; values below 1 give 400 \`INVALID_REQUEST\`. Entries are newest first.
- \`GET /referentiel/functions/search\` takes its search text in the query parameter \`q\` (1 to 200 characters, case-insensitive, matched against code, name and description).
- Invitations are \`PENDING\`, \`ACCEPTED\`, \`REVOKED\` or \`EXPIRED\` (a PENDING invitation past \`expiresAt\`, 7 days after creation). Invitations and members are listed newest first.
- Lists are plain JSON arrays, whole unless a page is asked for. With \`limit\` (1 or more, values above ${PageLimitMax} capped to ${PageLimitMax}; the change log keeps its own default and cap) or \`cursor\` (alone: pages of ${PageLimitDefault}), a list answers one page of the same array, in the same order, with \`Link: <...>; rel="next"\` (RFC 8288) while more items follow: a reference relative to the request's URL that repeats its query parameters with the next \`cursor\`. Follow it until no \`Link\` comes back. A cursor is valid only for the list and filters that gave it (400 \`INVALID_REQUEST\` otherwise), and items written between two pages do not shift them.
- Deprecated application fields \`applicationVip\`, \`annualCost\`, \`contactIT\` and \`contactMetier\` are removed in v0.1.88.
- Recommended client settings: a 30-second timeout; after a 401, fetch a new token.`

type Json = Record<string, any>

/**
 * operationId -> scope, read from the contract's annotations (the tags are checked against it),
 * and whether the operation requires a tenant-admin, which no partner client is.
 */
interface OperationGuard {
  readonly scope: Scope
  readonly tenantAdmin: boolean
  /** Takes a SCIM token and nothing else (docs/scim.md). */
  readonly scim: boolean
}

const scopesByOperation = (): ReadonlyMap<string, OperationGuard> => {
  const scopes = new Map<string, OperationGuard>()
  HttpApi.reflect(PublicApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      const scope = Context.getOption(mergedAnnotations, RequiredScope)
      const tenantAdmin = Option.isSome(Context.getOption(mergedAnnotations, RequiredRole))
      const scim = Option.isSome(Context.getOption(mergedAnnotations, RequiredCredential))
      if (Option.isSome(scope)) scopes.set(`${group.identifier}.${endpoint.identifier}`, { scope: scope.value, tenantAdmin, scim })
    }
  })
  return scopes
}

/** The partners' scheme: its token endpoint, and the scopes a token may carry. */
const oauth2Scheme = (baseUrl: string) => ({
  type: "oauth2",
  description: "OAuth 2.0 client credentials for partners (RFC 6749 section 4.4): a 5-minute JWT access token, sent as `Authorization: Bearer <token>`. Not accepted on the provisioning endpoints.",
  flows: {
    clientCredentials: {
      tokenUrl: `${baseUrl}/oauth/token`,
      scopes: { read: "Read the tenant's referential.", write: "Read and write the tenant's referential (includes read)." }
    }
  }
})

const methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const

const scimErrorRef = { $ref: "#/components/schemas/ScimError" }

const scimErrorResponse = (description: string, extraHeaders: Record<string, unknown> = {}) => ({
  description,
  headers: { ...extraHeaders, ...rateLimitHeaderRefs },
  content: { [ScimMediaType]: { schema: scimErrorRef } }
})

/**
 * A SCIM operation answers SCIM errors, never problem+json, whoever refuses it (the gateway
 * included), and takes the SCIM token only. `x-sdk: false`: the SDKs leave it to identity tools.
 */
const finishScimOperation = (method: string, path: string, operation: Json): void => {
  operation.security = [{ scimToken: [] }]
  operation["x-sdk"] = false
  // A SCIM token has no scope: the scope tags would say nothing true.
  operation.tags = (operation.tags as Array<string>).filter((tag) => !tag.startsWith("scope:"))
  const kept = Object.fromEntries(
    Object.entries(operation.responses as Record<string, Json>).filter(([status]) => Number(status) < 400)
  )
  for (const response of Object.values(kept)) response.headers = { ...response.headers, ...rateLimitHeaderRefs }
  const retryAfter = { "Retry-After": { $ref: "#/components/headers/Retry-After" } }
  const users = path.startsWith(`${ScimPath}/Users`)
  const one = path.endsWith("{id}")
  const writes = method !== "get"
  const errors: Record<string, Json | false> = {
    "400": (users && (writes || !one)) &&
      scimErrorResponse("`invalidSyntax`, `invalidFilter`, `invalidValue`, `invalidPath`, `noTarget` or `mutability` (`scimType` tells which)."),
    "401": scimErrorResponse("No SCIM token, or one that is malformed, unknown or revoked."),
    "403": scimErrorResponse("A PAT or a partner's token: SCIM takes a SCIM token only."),
    "404": one && scimErrorResponse("No such resource in the tenant (an unknown, deleted or other tenant's User)."),
    "409": (users && writes) && scimErrorResponse("`uniqueness`: the userName or e-mail is taken; or the change would leave the tenant without a tenant-admin."),
    "412": (users && one && writes) && scimErrorResponse("`If-Match` is not the User's current version."),
    "429": scimErrorResponse("Over the SCIM token's limit (or, creating, the tenant's invitations per hour): wait `Retry-After` seconds.", retryAfter),
    "503": scimErrorResponse("A dependency is unavailable; retry after `Retry-After` seconds.", retryAfter)
  }
  operation.responses = { ...kept, ...Object.fromEntries(Object.entries(errors).filter(([, response]) => response !== false)) }
  delete operation["x-codeSamples"]
}

/** `#/$defs/X` (a JSON Schema document's) as `#/components/schemas/X`, everywhere in `value`. */
const toComponentRefs = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(toComponentRefs)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) =>
      key === "$ref" && typeof field === "string"
        ? [key, field.replace(/^#\/\$defs\//, "#/components/schemas/")]
        : [key, toComponentRefs(field)]
    )
  )
}

/**
 * The JSON Schema of `schema`'s JSON form, its definitions added to the components (a definition
 * already there is kept).
 */
const componentsJsonSchema = (schema: Schema.Top, components: Json): Json => {
  const document = Schema.toJsonSchemaDocument(Schema.toCodecJson(schema), { onExcessProperty: "error" })
  const named = effect3ComponentNames({ root: toComponentRefs(document.schema), components: { schemas: toComponentRefs(document.definitions) } })
  for (const [name, definition] of Object.entries(named.components.schemas as Json)) {
    if (!(name in components)) components[name] = effect3Schema(definition)
  }
  // Effect 4 leaves a class's own description out of its wire form's schema.
  const description = schema.ast.annotations?.description
  const root = named.root as Json
  const component = typeof root.$ref === "string" ? root.$ref.replace("#/components/schemas/", "") : undefined
  if (typeof description === "string" && component !== undefined && components[component]?.description === undefined) {
    components[component] = { ...components[component], description }
  }
  return effect3Schema(root) as Json
}

/**
 * The events a receiver is sent (OpenAPI 3.1 `webhooks`), described from their schemas; their
 * definitions join the components, beside the resources they share (Application...).
 */
const eventWebhooks = (schemas: Json): Json => {
  const webhook = (schema: Schema.Top, type: string, subject: string, summary: string, advice: string) => ({
    post: {
      summary,
      description: `Published on NATS JetStream (stream \`EVENTS\`, subject \`${subject}\`) with the event id as message id and the W3C \`traceparent\` as a message header. Receivers are idempotent on \`id\`. ${advice}`,
      operationId: `webhooks.${type}`,
      requestBody: {
        required: true,
        content: { [JsonMedia]: { schema: componentsJsonSchema(schema, schemas) } }
      },
      responses: { "2XX": { description: "The receiver has the event." } }
    }
  })
  const keepRevision = "Keep the highest `data.revision` of each application and drop older updates."
  return {
    "application.created": webhook(ApplicationCreated, "application.created", ApplicationCreatedSubject, "An application was created", keepRevision),
    "application.updated": webhook(ApplicationUpdated, "application.updated", ApplicationUpdatedSubject, "An application changed", keepRevision),
    "das.submitted": webhook(DasSubmitted, "das.submitted", DasSubmittedSubject, "A DAS was submitted", "A DAS is submitted once: one such event per DAS, `data` as it was submitted.")
  }
}

/** The pure post-processing of `OpenApi.fromApi(PublicApi)`; the input is not modified. */
export const finishOpenApiDocument = (spec: Json, options: OpenApiDocumentOptions): Json => {
  const settings: Required<OpenApiDocumentOptions> = {
    rateLimitPerMinute: 180,
    anonymousRateLimitPerMinute: 60,
    partnerRateLimitPerMinute: 600,
    scimRateLimitPerMinute: 600,
    ...options,
    baseUrl: options.baseUrl.replace(/\/+$/, "")
  }
  const doc: Json = effect3Document(structuredClone(spec))
  const scopes = scopesByOperation()
  doc.info = { ...doc.info, description: describeApi(settings) }
  doc.servers = [{ url: settings.baseUrl, description: "Public base URL (includes /api/v1)." }]
  doc.security = [{ pat: [] }, { oauth2: [] }]
  doc.components.securitySchemes = { ...doc.components.securitySchemes, oauth2: oauth2Scheme(settings.baseUrl) }
  doc.components.headers = componentHeaders
  doc.components.schemas.Problem = problemSchema
  doc.components.schemas.DateTimeUtc = { type: "string", format: "date-time", description: "ISO 8601 UTC timestamp." }
  doc.tags = [
    ...doc.tags,
    { name: "scope:read", description: "Callable with a token of scope `read` or `write`." },
    { name: "scope:write", description: "Callable only with a token of scope `write`." }
  ]

  const paths: Json = {}
  for (const [fullPath, item] of Object.entries(doc.paths as Json)) {
    const path = fullPath.startsWith(PublicApiPrefix) ? fullPath.slice(PublicApiPrefix.length) || "/" : fullPath
    for (const method of methods) {
      const operation: Json | undefined = item[method]
      if (operation === undefined) continue
      const guard = scopes.get(operation.operationId)
      if (guard === undefined) throw new Error(`operation ${operation.operationId} has no RequiredScope annotation`)
      const { scope } = guard
      const scopeTags = (operation.tags as Array<string>).filter((tag) => tag.startsWith("scope:"))
      if (scopeTags.length !== 1 || scopeTags[0] !== `scope:${scope}`) {
        operation.tags = [...(operation.tags as Array<string>).filter((tag) => !tag.startsWith("scope:")), `scope:${scope}`]
      }
      if (guard.scim) {
        finishScimOperation(method, path, operation)
        continue
      }
      operation.security = guard.tenantAdmin ? [{ pat: [] }] : [{ pat: [] }, { oauth2: [scope] }]
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        response.headers = { ...response.headers, ...rateLimitHeaderRefs }
        if (Number(status) < 400 || response.content === undefined) continue
        const schema = response.content[JsonMedia]?.schema ?? response.content[problemContentType]?.schema
        response.content = { [problemContentType]: { schema } }
        if (status === "400") {
          response.description = "The request does not match the endpoint's schema (`INVALID_REQUEST`), or one of the endpoint's rules refused it; `errorCode` tells which."
        }
      }
      operation.responses["401"] = problemResponse(
        "UNAUTHENTICATED",
        "The token is missing, malformed, unknown, revoked or expired.",
        "#/components/schemas/Problem.UNAUTHENTICATED"
      )
      operation.responses["429"] = problemResponse(
        "RATE_LIMITED",
        "Wait `Retry-After` seconds.",
        "#/components/schemas/Problem.RATE_LIMITED",
        { "Retry-After": { $ref: "#/components/headers/Retry-After" } }
      )
      if (operation.responses["503"] !== undefined) {
        operation.responses["503"].headers = { "Retry-After": { $ref: "#/components/headers/Retry-After" }, ...operation.responses["503"].headers }
      }
      if (operation.requestBody !== undefined) {
        operation.responses["413"] = problemResponse("PAYLOAD_TOO_LARGE", "The body exceeds 1 MiB.", "#/components/schemas/Problem")
      }
      operation["x-codeSamples"] = codeSamples(method, path, operation, doc, settings.baseUrl)
    }
    paths[path] = item
  }
  doc.paths = paths
  doc.webhooks = eventWebhooks(doc.components.schemas)
  return effect3ComponentOrder(doc)
}

/** The public contract annotated so that every OpenAPI rendering of it (JSON, Scalar) is the finished document. */
export const documentedPublicApi = (options: OpenApiDocumentOptions) =>
  PublicApi.annotate(OpenApi.Transform, (spec) => finishOpenApiDocument(spec, options))

export const publicOpenApiDocument = (options: OpenApiDocumentOptions): Json => OpenApi.fromApi(documentedPublicApi(options))

/**
 * The settings of the published document (libs/domain/openapi.json): those of a gateway left at
 * its defaults (port 8080, 180, 60 and 600 requests a minute), so that the file is what such a gateway
 * serves at /api/v1/openapi.json. Clients take their base URL from their user.
 */
export const PublishedOpenApiOptions: OpenApiDocumentOptions = {
  baseUrl: "http://localhost:8080/api/v1",
  rateLimitPerMinute: 180,
  anonymousRateLimitPerMinute: 60,
  partnerRateLimitPerMinute: 600,
  scimRateLimitPerMinute: 600
}

/** The published document as committed: two-space indentation, a final newline. */
export const publishedOpenApiText = (): string => `${JSON.stringify(publicOpenApiDocument(PublishedOpenApiOptions), null, 2)}\n`
