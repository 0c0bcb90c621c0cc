import { Schema, SchemaTransformation } from "effect"
import { type ErrorCode, ProblemCatalog, problemAnnotations, ProblemFields } from "./Problem.js"

/**
 * Expected failures. Each is a tagged error whose wire form is an RFC 9457 problem: the schema
 * given to the HttpApi contract encodes the error into a `Problem` body (so the OpenAPI document
 * shows the real body) and decodes such a body back into the tagged error (so typed clients get
 * the tagged error). At run time the platform's problem middleware fills `type` and `instance`
 * from configuration and the request.
 */
const defineError = <const Tag extends string, const Code extends ErrorCode>(tag: Tag, errorCode: Code) => {
  const row = ProblemCatalog[errorCode]
  return class extends Schema.TaggedError<{ readonly _tag: Tag; readonly detail: string }>()(tag, {
    detail: Schema.String
  }) {
    static readonly errorCode: Code = errorCode
    static readonly status = row.status
    get errorCode(): Code {
      return errorCode
    }
  }
}

export class InvalidRequest extends defineError("InvalidRequest", "INVALID_REQUEST") {}
export class InvalidRegulation extends defineError("InvalidRegulation", "INVALID_REGULATION") {}
export class InvalidInvitationParam extends defineError("InvalidInvitationParam", "INVALID_INVITATION_PARAM") {}
export class Unauthenticated extends defineError("Unauthenticated", "UNAUTHENTICATED") {}
export class InsufficientScope extends defineError("InsufficientScope", "INSUFFICIENT_SCOPE") {}
export class NotFound extends defineError("NotFound", "NOT_FOUND") {}
export class AlreadyInvited extends defineError("AlreadyInvited", "ALREADY_INVITED") {}
export class InvitationNotPending extends defineError("InvitationNotPending", "INVITATION_NOT_PENDING") {}
export class LastTenantAdmin extends defineError("LastTenantAdmin", "LAST_TENANT_ADMIN") {}
/** Internal (provisioning's admin API): an SSO login of a person removed from the tenant. */
export class MemberWasRemoved extends defineError("MemberWasRemoved", "MEMBER_REMOVED") {}
export class Conflict extends defineError("Conflict", "CONFLICT") {}
export class RateLimited extends defineError("RateLimited", "RATE_LIMITED") {}
export class Unavailable extends defineError("Unavailable", "UNAVAILABLE") {}
export class PayloadTooLarge extends defineError("PayloadTooLarge", "PAYLOAD_TOO_LARGE") {}

export type ApiError =
  | InvalidRequest
  | InvalidRegulation
  | InvalidInvitationParam
  | Unauthenticated
  | InsufficientScope
  | NotFound
  | AlreadyInvited
  | InvitationNotPending
  | LastTenantAdmin
  | MemberWasRemoved
  | Conflict
  | RateLimited
  | Unavailable
  | PayloadTooLarge

interface ErrorClass<E> {
  new (args: { readonly detail: string }): E
  readonly errorCode: ErrorCode
  readonly status: number
}

const problemSchemas = new WeakMap<object, unknown>()

/**
 * The contract-side schema of an error: a problem body on the wire, the tagged error in code. One
 * schema per error class, so that every endpoint declaring the error shares its OpenAPI component.
 */
export const asProblem = <E extends { readonly detail: string }>(cls: ErrorClass<E>) => {
  const known = problemSchemas.get(cls) as ReturnType<typeof makeProblemSchema<E>> | undefined
  if (known !== undefined) return known
  const made = makeProblemSchema(cls)
  problemSchemas.set(cls, made)
  return made
}

const makeProblemSchema = <E extends { readonly detail: string }>(cls: ErrorClass<E>) => {
  const row = ProblemCatalog[cls.errorCode]
  return Schema.Struct({ ...ProblemFields, errorCode: Schema.Literal(cls.errorCode) }).annotate({
    identifier: `Problem.${cls.errorCode}`,
    title: row.title
  }).pipe(
    Schema.decodeTo(
      Schema.declare((u: unknown): u is E => u instanceof cls, { identifier: cls.errorCode }),
      SchemaTransformation.transform({
        decode: (wire) => new cls({ detail: wire.detail }),
        encode: (error) => ({
          type: row.slug,
          title: row.title,
          status: row.status,
          detail: error.detail,
          instance: "",
          errorCode: cls.errorCode
        })
      })
    ),
    problemAnnotations(row.status)
  )
}

export const isApiError = (u: unknown): u is ApiError =>
  typeof u === "object" && u !== null && "errorCode" in u && typeof (u as { errorCode: unknown }).errorCode === "string" &&
  "detail" in u && (u as { errorCode: string }).errorCode in ProblemCatalog
