import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import { Context, Schema } from "effect"
import { scoped, Upstream } from "./Annotations.js"
import { PublicApiPrefix } from "./Prefix.js"
import { Caller } from "./Caller.js"
import { withoutControls } from "./Text.js"
import { DateTimeUtc, Uuid } from "./Wire.js"

/**
 * SCIM 2.0 (RFC 7643 schemas, RFC 7644 protocol): how identity tools (Okta, Microsoft Entra ID,
 * OneLogin, JumpCloud) provision and deprovision a tenant's members (docs/scim.md). Its own token
 * kind (`ap_scim_`), its own rate limit, its own media type and error shape: the gateway renders
 * every refusal under the SCIM prefix as a SCIM error, not as problem+json.
 */

/** Under the public base URL: `{base_url}/scim/v2`. */
export const ScimPath = "/scim/v2"
/** The same under the public prefix, as routes and requests name it: `/api/v1/scim/v2`. */
export const ScimApiPrefix = `${PublicApiPrefix}${ScimPath}`
export const ScimMediaType = "application/scim+json"

export const ScimUserSchemaUrn = "urn:ietf:params:scim:schemas:core:2.0:User"
export const ScimListSchemaUrn = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
export const ScimErrorSchemaUrn = "urn:ietf:params:scim:api:messages:2.0:Error"
export const ScimPatchSchemaUrn = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
export const ScimServiceProviderConfigUrn = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
export const ScimResourceTypeUrn = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
export const ScimSchemaUrn = "urn:ietf:params:scim:schemas:core:2.0:Schema"

/** The most resources one list answer holds (`filter.maxResults` of ServiceProviderConfig); `count` above it is capped. */
export const ScimMaxResults = 200
/** `count` when the request gives none (RFC 7644 3.4.2.4 leaves it to the service provider). */
export const ScimDefaultCount = 100

/**
 * The SCIM token's literal prefix: `ap_scim_`, 30 random base62 characters, then the CRC32 of
 * those in 6 base62 characters, as a PAT (docs/security.md, "Token formats").
 */
export const ScimTokenLiteralPrefix = "ap_scim_"

/** `scimType` values of RFC 7644 section 3.12 that this service answers. */
export const ScimErrorType = Schema.Literals(["invalidFilter", "tooMany", "uniqueness", "mutability", "invalidSyntax", "invalidPath", "noTarget", "invalidValue", "invalidVers", "sensitive"])
export type ScimErrorType = typeof ScimErrorType.Type

/** Every SCIM error (RFC 7644 3.12): `status` is the HTTP status as a string. */
export class ScimError extends Schema.Class<ScimError>("ScimError")({
  schemas: Schema.Tuple([Schema.Literal(ScimErrorSchemaUrn)]),
  status: Schema.String,
  scimType: Schema.optionalKey(ScimErrorType),
  detail: Schema.String
}) {}

/** A SCIM error body for an HTTP status: the one shape the gateway and provisioning both write. */
export const scimError = (status: number, detail: string, scimType?: ScimErrorType): ScimError =>
  ScimError.make({ schemas: [ScimErrorSchemaUrn], status: String(status), ...(scimType === undefined ? {} : { scimType }), detail })

const ScimName = Schema.Struct({
  formatted: Schema.optionalKey(Schema.String),
  familyName: Schema.optionalKey(Schema.String),
  givenName: Schema.optionalKey(Schema.String)
})

const ScimEmail = Schema.Struct({
  value: Schema.String,
  type: Schema.optionalKey(Schema.String),
  primary: Schema.optionalKey(Schema.Boolean)
})

/** A role of RFC 7643 4.1.2: `value` is one of the product's six roles. */
const ScimRole = Schema.Struct({
  value: Schema.String,
  display: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(Schema.String),
  primary: Schema.optionalKey(Schema.Boolean)
})

export const ScimMeta = Schema.Struct({
  resourceType: Schema.String,
  created: Schema.optionalKey(Schema.String),
  lastModified: Schema.optionalKey(Schema.String),
  location: Schema.String,
  version: Schema.optionalKey(Schema.String.annotate({ description: "The weak ETag of the resource, as the ETag header carries it." }))
})

/**
 * A tenant member (or a person provisioned and not yet a member) as SCIM's User. `active` is true
 * exactly when the person is an active member of the tenant; `roles` holds their one role.
 */
export class ScimUser extends Schema.Class<ScimUser>("ScimUser")({
  schemas: Schema.Tuple([Schema.Literal(ScimUserSchemaUrn)]),
  id: Uuid,
  externalId: Schema.optionalKey(Schema.String),
  userName: Schema.String,
  name: Schema.optionalKey(ScimName),
  displayName: Schema.optionalKey(Schema.String),
  emails: Schema.Array(ScimEmail),
  active: Schema.Boolean,
  roles: Schema.Array(ScimRole),
  meta: ScimMeta
}) {}

/**
 * A User as a client sends it (POST, PUT), attribute names in their canonical case (RFC 7643 says
 * they are case-insensitive: provisioning folds them first). Attributes not listed here are
 * accepted and ignored, since identity tools send their default mappings (title, phoneNumbers...).
 */
export class ScimUserInput extends Schema.Class<ScimUserInput>("ScimUserInput")({
  schemas: Schema.optionalKey(Schema.Array(Schema.String)),
  externalId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  userName: Schema.String,
  name: Schema.optionalKey(Schema.NullOr(ScimName)),
  displayName: Schema.optionalKey(Schema.NullOr(Schema.String)),
  emails: Schema.optionalKey(Schema.NullOr(Schema.Array(ScimEmail))),
  active: Schema.optionalKey(Schema.Boolean),
  roles: Schema.optionalKey(Schema.NullOr(Schema.Array(ScimRole)))
}) {}

/**
 * Any JSON value, described as such (rather than as Effect's recursive `Json`), and read as
 * `unknown` by the code, as a JSON body's free part.
 */
const AnyJson: Schema.Codec<unknown> = Schema.Json.check(
  Schema.makeFilter(() => true, { toJsonSchema: () => ({ type: ["string", "number", "boolean", "object", "array", "null"] }) })
)

/** One operation of a PATCH (RFC 7644 3.5.2); `op` is compared case-insensitively, as Entra ID sends `Replace`. */
export const ScimPatchOperation = Schema.Struct({
  op: Schema.String,
  path: Schema.optionalKey(Schema.String),
  value: Schema.optionalKey(AnyJson)
})

export class ScimPatchRequest extends Schema.Class<ScimPatchRequest>("ScimPatchRequest")({
  schemas: Schema.Array(Schema.String),
  Operations: Schema.Array(ScimPatchOperation)
}) {}

export class ScimUserList extends Schema.Class<ScimUserList>("ScimUserList")({
  schemas: Schema.Tuple([Schema.Literal(ScimListSchemaUrn)]),
  totalResults: Schema.Int,
  startIndex: Schema.Int,
  itemsPerPage: Schema.Int,
  Resources: Schema.Array(ScimUser)
}) {}

/** Discovery documents (RFC 7644 section 4): fixed by this service, described loosely. */
const DiscoveryDocument = Schema.Record(Schema.String, AnyJson)

export class ScimDiscoveryList extends Schema.Class<ScimDiscoveryList>("ScimDiscoveryList")({
  schemas: Schema.Tuple([Schema.Literal(ScimListSchemaUrn)]),
  totalResults: Schema.Int,
  startIndex: Schema.Int,
  itemsPerPage: Schema.Int,
  Resources: Schema.Array(DiscoveryDocument)
}) {}

/** Query of `GET /Users` (RFC 7644 3.4.2). */
export const ScimUserQuery = Schema.Struct({
  filter: Schema.optionalKey(Schema.String.annotate({
    description: "`userName eq \"…\"`, `externalId eq \"…\"`, `emails.value eq \"…\"` or `id eq \"…\"`, alone or joined by `and`; anything else is 400 `invalidFilter`."
  })),
  startIndex: Schema.optionalKey(Schema.String.annotate({ description: "1-based index of the first result; below 1 reads as 1." })),
  count: Schema.optionalKey(Schema.String.annotate({ description: `Results per page, default ${ScimDefaultCount}, at most ${ScimMaxResults}; 0 answers the total only.` })),
  attributes: Schema.optionalKey(Schema.String),
  excludedAttributes: Schema.optionalKey(Schema.String)
})

const scimJson = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.asJson({ contentType: ScimMediaType }))

const UserPath = Schema.Struct({ id: Schema.String.annotate({ description: "The User's id (a UUID); any other value answers 404." }) })
const DiscoveryPath = Schema.Struct({ id: Schema.String })

/** The kind of credential an endpoint takes; read by the gateway, which admits nothing else on it. */
export class RequiredCredential extends Context.Service<RequiredCredential, "scim">()("@portfolio/domain/RequiredCredential") {}

/**
 * Authentication of a SCIM call: on the wire a Bearer SCIM token checked by the gateway (401 as a
 * SCIM error); inside the platform the gateway's signed assertion, whose role is `scim`.
 */
export class ScimAuthentication extends HttpApiMiddleware.Service<ScimAuthentication, { provides: Caller }>()("ScimAuthentication", {
  error: scimJson(ScimError).pipe(HttpApiSchema.status(401)),
  security: {
    scimToken: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "A tenant's SCIM token, sent as `Authorization: Bearer ap_scim_...`; made by a tenant-admin, shown once, revocable."),
      HttpApiSecurity.annotate(OpenApi.Format, "ap_scim_<30 base62><6 base62 CRC32>")
    )
  }
}) {}

export class ScimGroup extends HttpApiGroup.make("scim")
  .add(
    HttpApiEndpoint.get("listScimUsers", "/Users", {
      query: ScimUserQuery,
      success: scimJson(ScimUserList),
      error: scimJson(ScimError).pipe(HttpApiSchema.status(400))
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "List or find users (SCIM)")
      .annotate(OpenApi.Description, "Every person provisioned in the tenant, and every member of it, oldest first, as SCIM Users.")
  )
  .add(
    HttpApiEndpoint.get("getScimUser", "/Users/:id", {
      params: UserPath,
      success: scimJson(ScimUser),
      error: scimJson(ScimError).pipe(HttpApiSchema.status(404))
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "Read one user (SCIM)")
  )
  .add(
    HttpApiEndpoint.post("createScimUser", "/Users", {
      payload: scimJson(ScimUserInput),
      success: scimJson(ScimUser).pipe(HttpApiSchema.status(201)),
      error: scimJson(ScimError).pipe(HttpApiSchema.status(409))
    })
      .annotateMerge(scoped("write"))
      .annotate(OpenApi.Summary, "Provision a user (SCIM)")
      .annotate(
        OpenApi.Description,
        "With a single sign-on connection whose domains include the e-mail's, the person becomes a member at once (source `SSO_JIT`); otherwise an invitation is mailed and the User stays `active: false` until it is accepted. 409 `uniqueness` when the userName or the e-mail is taken."
      )
  )
  .add(
    HttpApiEndpoint.put("replaceScimUser", "/Users/:id", {
      params: UserPath,
      payload: scimJson(ScimUserInput),
      success: scimJson(ScimUser),
      error: scimJson(ScimError).pipe(HttpApiSchema.status(404))
    })
      .annotateMerge(scoped("write"))
      .annotate(OpenApi.Summary, "Replace a user (SCIM)")
      .annotate(OpenApi.Description, "`active: false` removes the member (irreversible; their tokens are revoked at once); `active: true` for a removed member mails a new invitation.")
  )
  .add(
    HttpApiEndpoint.patch("patchScimUser", "/Users/:id", {
      params: UserPath,
      payload: scimJson(ScimPatchRequest),
      success: scimJson(ScimUser),
      error: scimJson(ScimError).pipe(HttpApiSchema.status(404))
    })
      .annotateMerge(scoped("write"))
      .annotate(OpenApi.Summary, "Update a user (SCIM PATCH)")
      .annotate(OpenApi.Description, "`add`, `replace` and `remove` of `active`, `name`, `displayName`, `externalId`, `emails` and `roles`, `op` in any case; a `replace` without `path` holds a map of attributes.")
  )
  .add(
    HttpApiEndpoint.delete("deleteScimUser", "/Users/:id", {
      params: UserPath,
      success: HttpApiSchema.NoContent,
      error: scimJson(ScimError).pipe(HttpApiSchema.status(404))
    })
      .annotateMerge(scoped("write"))
      .annotate(OpenApi.Summary, "Deprovision a user (SCIM)")
      .annotate(OpenApi.Description, "Removes the member (irreversible) or revokes their pending invitation; the User is then gone (404).")
  )
  .add(
    HttpApiEndpoint.get("getScimServiceProviderConfig", "/ServiceProviderConfig", {
      success: scimJson(DiscoveryDocument)
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "What this SCIM service supports")
  )
  .add(
    HttpApiEndpoint.get("listScimResourceTypes", "/ResourceTypes", {
      success: scimJson(ScimDiscoveryList)
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "SCIM resource types (User only: Groups are not supported)")
  )
  .add(
    HttpApiEndpoint.get("getScimResourceType", "/ResourceTypes/:id", {
      params: DiscoveryPath,
      success: scimJson(DiscoveryDocument),
      error: scimJson(ScimError).pipe(HttpApiSchema.status(404))
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "One SCIM resource type")
  )
  .add(
    HttpApiEndpoint.get("listScimSchemas", "/Schemas", {
      success: scimJson(ScimDiscoveryList)
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "SCIM schemas")
  )
  .add(
    HttpApiEndpoint.get("getScimSchema", "/Schemas/:id", {
      params: DiscoveryPath,
      success: scimJson(DiscoveryDocument),
      error: scimJson(ScimError).pipe(HttpApiSchema.status(404))
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "One SCIM schema")
  )
  .annotate(OpenApi.Title, "SCIM 2.0")
  .annotate(
    OpenApi.Description,
    "For identity tools, with a SCIM token (`ap_scim_…`, made by a tenant-admin) and no other kind: RFC 7643 and RFC 7644, `application/scim+json`, errors in SCIM's shape. Not in the SDKs (docs/scim.md)."
  )
  .annotate(Upstream, "provisioning")
  .annotateMerge(Context.make(RequiredCredential, "scim"))
  .middleware(ScimAuthentication)
  .prefix(ScimApiPrefix) {}

/** A tenant may hold this many active SCIM tokens: one in use and its replacement during a rotation. */
export const ScimTokensPerTenantMax = 2

/** What a SCIM token is for, as its maker describes it ("Okta", "Entra ID production"). */
export const ScimTokenLabel = Schema.String.pipe(
  Schema.check(Schema.isTrimmed()),
  Schema.check(Schema.isMinLength(1)),
  Schema.check(Schema.isMaxLength(80)),
  withoutControls({ lineBreaks: false }),
  Schema.annotate({ identifier: "ScimTokenLabel", description: "1 to 80 characters on one line, such as the identity tool's name." })
)

/** A SCIM token as it is listed: never the token itself. */
export class ScimToken extends Schema.Class<ScimToken>("ScimToken")({
  id: Uuid,
  tenantId: Uuid,
  label: ScimTokenLabel,
  tokenPrefix: Schema.String.annotate({ description: "`ap_scim_` and the first 3 random characters: enough to recognise it, never to use it." }),
  createdBy: Schema.String.annotate({ description: "Who made it: `console:<e-mail>` of a tenant-admin, or the operator's name." }),
  createdAt: DateTimeUtc,
  lastUsedAt: Schema.NullOr(DateTimeUtc),
  revokedAt: Schema.NullOr(DateTimeUtc)
}) {}

/** A SCIM token just made: the only answer that holds the token. */
export class ScimTokenWithSecret extends Schema.Class<ScimTokenWithSecret>("ScimTokenWithSecret")({
  ...ScimToken.fields,
  token: Schema.String.annotate({ description: "ap_scim_ + 30 base62 + 6 base62 of a CRC32; shown once, store it in the identity tool now." })
}) {}

export class CreateScimTokenRequest extends Schema.Class<CreateScimTokenRequest>("CreateScimTokenRequest")({
  label: ScimTokenLabel
}) {}
