import { HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import {
  type CallerIdentity,
  isApiError,
  ProblemCatalog,
  PublicApiPrefix,
  scimError,
  type ScimErrorType,
  ScimListSchemaUrn,
  ScimMediaType,
  ScimPatchRequest,
  ScimApiPrefix,
  ScimUser,
  ScimUserInput,
  ScimUserList,
  ScimUserSchemaUrn
} from "@portfolio/domain"
import { carriesBody, decodeIssues, exceedsJsonDepth, isDependencyDown, isJsonContentType, MaxBodyBytes, MaxJsonDepth, unavailableRetryAfterSeconds } from "@portfolio/platform/http"
import { type AssertionVerifier, assertedCaller, type SecurityLog } from "@portfolio/platform/security"
import type { UnitOfWork } from "@portfolio/platform/sql"
import { ByteSize, Cause, DateTime, Effect, Result, Option, Schema } from "effect"
import { ProvisioningSettings } from "../../Config.js"
import { canonicalPatch, canonicalUser, invalidSyntax, ScimRefusal } from "../../domain/ScimUser.js"
import { namesVersion, weakETag } from "../../domain/ScimVersion.js"
import type { IdentityProvider } from "../../ports/IdentityProvider.js"
import type { InvitationRepository } from "../../ports/InvitationRepository.js"
import type { Mailer } from "../../ports/Mailer.js"
import type { MemberRepository } from "../../ports/MemberRepository.js"
import type { ProvisioningOutbox } from "../../ports/ProvisioningOutbox.js"
import type { ScimUserRepository, ScimUserView } from "../../ports/ScimUserRepository.js"
import type { SsoConnectionRepository } from "../../ports/SsoConnectionRepository.js"
import type { TenantRepository } from "../../ports/TenantRepository.js"
import { authorizeScim } from "../../usecases/Authorization.js"
import { invitationRetry } from "../../usecases/Invitations.js"
import { createScimUser, deleteScimUser, getScimUser, listScimUsers, patchScimUser, replaceScimUser } from "../../usecases/ScimUsers.js"
import { publicOrigin } from "./RequestOrigin.js"
import { serviceProviderConfig, UserResourceTypeId, userResourceType, userSchema } from "./ScimDiscovery.js"

/**
 * SCIM 2.0 on the public port (docs/scim.md), at the contract's paths. Raw routes beside the
 * HttpApi, since its decoder reads only `application/json` bodies and identity tools send
 * `application/scim+json`; every answer is `application/scim+json`, every refusal a SCIM error.
 */


const UsersPath = `${ScimApiPrefix}/Users`
const UserPath = `${UsersPath}/:id`

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(JSON.stringify(body), { status, contentType: ScimMediaType, headers })

const refusal = (status: number, detail: string, scimType?: ScimErrorType, headers: Record<string, string> = {}) =>
  answer(status, scimError(status, detail, scimType), headers)

/**
 * A resource's absolute URI (RFC 7643 3.1 `meta.location`, RFC 7644 3.3 `Location`): under the
 * public base URL, since the gateway forwards the request without the Host the client used.
 */
const locationOf = (target: string) =>
  Effect.map(ProvisioningSettings, ({ publicBaseUrl }) => `${publicBaseUrl}${target.slice(PublicApiPrefix.length)}`)

const userLocation = (id: string) => locationOf(`${UsersPath}/${id}`)

const nameOf = (user: ScimUserView) => {
  const parts = {
    ...(user.formattedName === null ? {} : { formatted: user.formattedName }),
    ...(user.familyName === null ? {} : { familyName: user.familyName }),
    ...(user.givenName === null ? {} : { givenName: user.givenName })
  }
  return Object.keys(parts).length === 0 ? {} : { name: parts }
}

/** A User as RFC 7643 shows it: one work e-mail, one primary role, the version as a weak ETag. */
const representationOf = (user: ScimUserView, location: string) =>
  new ScimUser({
    schemas: [ScimUserSchemaUrn],
    id: user.id,
    ...(user.externalId === null ? {} : { externalId: user.externalId }),
    userName: user.userName,
    ...nameOf(user),
    ...(user.displayName === null ? {} : { displayName: user.displayName }),
    emails: [{ value: user.email, type: "work", primary: true }],
    active: user.active,
    roles: [{ value: user.arbRole, display: user.arbRole, primary: true }],
    meta: {
      resourceType: "User",
      created: DateTime.formatIso(user.createdAt),
      lastModified: DateTime.formatIso(user.updatedAt),
      location,
      version: weakETag(user.version)
    }
  })

const userAnswer = (status: number, user: ScimUserView, headers: Record<string, string> = {}) =>
  Effect.map(userLocation(user.id), (location) => answer(status, representationOf(user, location), { etag: weakETag(user.version), ...headers }))

/** `application/scim+json` or `application/json`, by the platform's rule for JSON bodies (UTF-8 only). */
const isScimBody = (contentType: string | undefined) => isJsonContentType(contentType, [ScimMediaType, "application/json"])

/**
 * A body of a media type SCIM does not read is refused before anything else reads it (415), as the
 * platform's guard refuses it on every other route: the assertion's check would read it first.
 */
const mediaTypeRefusal = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
  carriesBody(request.headers) && !isScimBody(request.headers["content-type"])
    ? Effect.fail(new ScimRefusal({ status: 415, detail: `The body must be ${ScimMediaType} or application/json, in UTF-8.` }))
    : Effect.void)

const describeIssues = (error: Schema.SchemaError) =>
  decodeIssues(error.issue)
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? `${issue.path.join(".")}: ` : ""}${issue.message}`.slice(0, 200))
    .join("; ")

/**
 * The request's body as `schema` reads it, its attribute names folded to their canonical case
 * first: a 400 `invalidSyntax` for a body that is not JSON, or not the shape (its media type was
 * checked before authentication, `mediaTypeRefusal`).
 */
const bodyAs = <A, I>(schema: Schema.Codec<A, I>, what: string, fold: (json: unknown) => unknown) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text
    if (exceedsJsonDepth(text, MaxJsonDepth)) return yield* invalidSyntax(`The body nests arrays and objects deeper than ${MaxJsonDepth} levels.`)
    const json = Result.try(() => JSON.parse(text) as unknown)
    if (Result.isFailure(json)) return yield* invalidSyntax("The body is not JSON.")
    // The refused values are reported, as Effect 3's messages quoted them (`Expected string, actual 1`).
    return yield* Schema.decodeUnknownEffect(schema)(fold(json.success), { reportInput: true }).pipe(
      Effect.mapError((error) => invalidSyntax(`The body is not a ${what}: ${describeIssues(error)}`))
    )
  })

const header = (name: string) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const value = request.headers[name]
    return typeof value === "string" ? value : undefined
  })

const idParameter = Effect.map(HttpRouter.params, (params) => params["id"] ?? "")

/** What a refusal of a use case reads as in SCIM's terms; the 429 of the invitations per hour says when to come back. */
const refusalOf = (error: unknown, caller: Option.Option<CallerIdentity>) =>
  Effect.gen(function*() {
    if (error instanceof ScimRefusal) return refusal(error.status, error.detail, error.scimType)
    if (isApiError(error)) {
      const status = ProblemCatalog[error.errorCode].status
      if (error._tag === "RateLimited" && Option.isSome(caller)) {
        const retry = yield* invitationRetry(caller.value.tenantId)
        return refusal(429, error.detail, undefined, {
          "retry-after": String(retry.retryAfterSeconds),
          "x-ratelimit-reset": String(retry.resetEpochSeconds),
          "x-ratelimit-limit": String(retry.limit),
          "x-ratelimit-remaining": "0"
        })
      }
      if (status === 503) return refusal(503, error.detail, undefined, { "retry-after": String(unavailableRetryAfterSeconds) })
      if (status === 401) return refusal(401, error.detail, undefined, { "www-authenticate": "Bearer" })
      return refusal(status, error.detail)
    }
    if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RequestParseError") {
      return error.reason.reason === "BodyTooLarge"
        ? refusal(413, `The request body exceeds ${MaxBodyBytes} bytes.`)
        : refusal(400, "The request body could not be read.", "invalidSyntax")
    }
    return yield* Effect.die(error)
  })

/** A failure nobody expected: logged with its cause, answered without a word of it. */
const defectAnswer = (cause: Cause.Cause<unknown>) =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.failCause(cause)
    : cause.reasons.some((reason) => Cause.isDieReason(reason) && isDependencyDown(reason.defect))
    ? Effect.as(
      Effect.logWarning("SCIM request failed: a dependency is unavailable", cause),
      refusal(503, "A dependency of the service is unavailable. Retry later.", undefined, { "retry-after": String(unavailableRetryAfterSeconds) })
    )
    : Effect.as(Effect.logError("SCIM request failed", cause), refusal(500, "An internal error occurred. It has been logged."))

/**
 * A SCIM route: the gateway's assertion checked as every route's is, the caller a SCIM token's
 * (403 otherwise), then `handle`; whatever fails is answered as a SCIM error.
 */
const scimRoute = <E, R>(handle: (caller: CallerIdentity) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function*() {
    yield* mediaTypeRefusal
    const caller = yield* assertedCaller
    yield* authorizeScim(caller)
    return yield* handle(caller).pipe(Effect.catch((error) => refusalOf(error, Option.some(caller))))
  }).pipe(
    Effect.catch((error) => refusalOf(error, Option.none())),
    Effect.catchCause(defectAnswer),
    // The servers bound every read so; a route that reads its own body bounds it itself.
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MaxBodyBytes))
  )

const listUsers = (caller: CallerIdentity) =>
  Effect.gen(function*() {
    const url = new URL((yield* HttpServerRequest.HttpServerRequest).originalUrl, "http://x")
    const parameter = (name: string) => url.searchParams.get(name) ?? undefined
    const page = yield* listScimUsers(caller, { filter: parameter("filter"), startIndex: parameter("startIndex"), count: parameter("count") })
    const resources = yield* Effect.forEach(page.users, (user) => Effect.map(userLocation(user.id), (location) => representationOf(user, location)))
    return answer(200, new ScimUserList({
      schemas: [ScimListSchemaUrn],
      totalResults: page.totalResults,
      startIndex: page.startIndex,
      itemsPerPage: resources.length,
      Resources: resources
    }))
  })

const getUser = (caller: CallerIdentity) =>
  Effect.gen(function*() {
    const user = yield* getScimUser(caller, yield* idParameter)
    const ifNoneMatch = yield* header("if-none-match")
    if (ifNoneMatch !== undefined && namesVersion(ifNoneMatch, user.version)) {
      return HttpServerResponse.empty({ status: 304, headers: { etag: weakETag(user.version) } })
    }
    return yield* userAnswer(200, user)
  })

const createUser = (caller: CallerIdentity) =>
  Effect.gen(function*() {
    const input = yield* bodyAs(ScimUserInput, "User", canonicalUser)
    const user = yield* createScimUser(caller, input, yield* publicOrigin)
    return yield* userAnswer(201, user, { location: yield* userLocation(user.id) })
  })

const replaceUser = (caller: CallerIdentity) =>
  Effect.gen(function*() {
    const id = yield* idParameter
    const input = yield* bodyAs(ScimUserInput, "User", canonicalUser)
    return yield* userAnswer(200, yield* replaceScimUser(caller, id, input, yield* header("if-match"), yield* publicOrigin))
  })

const patchUser = (caller: CallerIdentity) =>
  Effect.gen(function*() {
    const id = yield* idParameter
    const patch = yield* bodyAs(ScimPatchRequest, "PatchOp", canonicalPatch)
    return yield* userAnswer(200, yield* patchScimUser(caller, id, patch.Operations, yield* header("if-match"), yield* publicOrigin))
  })

const deleteUser = (caller: CallerIdentity) =>
  Effect.gen(function*() {
    yield* deleteScimUser(caller, yield* idParameter, yield* header("if-match"), yield* publicOrigin)
    return HttpServerResponse.empty({ status: 204 })
  })

/** A discovery document with its `meta` (RFC 7643 3.1), located where it is served. */
const discovered = (document: Readonly<Record<string, unknown>>, resourceType: string, target: string) =>
  Effect.map(locationOf(target), (location) => ({ ...document, meta: { resourceType, location } }))

const discoveryList = (documents: ReadonlyArray<Readonly<Record<string, unknown>>>) =>
  answer(200, { schemas: [ScimListSchemaUrn], totalResults: documents.length, startIndex: 1, itemsPerPage: documents.length, Resources: documents })

const resourceTypeDocument = discovered(userResourceType, "ResourceType", `${ScimApiPrefix}/ResourceTypes/${UserResourceTypeId}`)
const schemaDocument = discovered(userSchema, "Schema", `${ScimApiPrefix}/Schemas/${ScimUserSchemaUrn}`)

const oneOf = (id: string, known: string, document: Effect.Effect<Readonly<Record<string, unknown>>, never, ProvisioningSettings>) =>
  id === known ? Effect.map(document, (found) => answer(200, found)) : Effect.succeed(refusal(404, `No such resource: ${id.slice(0, 100)}.`))

type ScimHttpRequirements =
  | AssertionVerifier
  | IdentityProvider
  | InvitationRepository
  | Mailer
  | MemberRepository
  | ProvisioningOutbox
  | ProvisioningSettings
  | ScimUserRepository
  | SecurityLog
  | SsoConnectionRepository
  | TenantRepository
  | UnitOfWork

/** The routes of the contract's `scim` group, at exactly its declared paths. */
export const ScimHttpLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<ScimHttpRequirements>()
    const route = <E, R>(handle: (caller: CallerIdentity) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.provide(scimRoute(handle), context)
    yield* router.add("GET", UsersPath, route(listUsers))
    yield* router.add("POST", UsersPath, route(createUser))
    yield* router.add("GET", UserPath, route(getUser))
    yield* router.add("PUT", UserPath, route(replaceUser))
    yield* router.add("PATCH", UserPath, route(patchUser))
    yield* router.add("DELETE", UserPath, route(deleteUser))
    yield* router.add("GET", `${ScimApiPrefix}/ServiceProviderConfig`, route(() => Effect.map(discovered(serviceProviderConfig, "ServiceProviderConfig", `${ScimApiPrefix}/ServiceProviderConfig`), (document) => answer(200, document))))
    yield* router.add("GET", `${ScimApiPrefix}/ResourceTypes`, route(() => Effect.map(resourceTypeDocument, (document) => discoveryList([document]))))
    yield* router.add("GET", `${ScimApiPrefix}/ResourceTypes/:id`, route(() => Effect.flatMap(idParameter, (id) => oneOf(id, UserResourceTypeId, resourceTypeDocument))))
    yield* router.add("GET", `${ScimApiPrefix}/Schemas`, route(() => Effect.map(schemaDocument, (document) => discoveryList([document]))))
    yield* router.add("GET", `${ScimApiPrefix}/Schemas/:id`, route(() => Effect.flatMap(idParameter, (id) => oneOf(id, ScimUserSchemaUrn, schemaDocument))))
  })
)
