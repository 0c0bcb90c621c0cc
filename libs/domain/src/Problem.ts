import { HttpApiSchema } from "effect/http-api"
import { Schema } from "effect"

/**
 * The error catalogue (docs/product-rules.md#errors): one row per stable `errorCode`. The HTTP status, the
 * `type` slug and the title of every problem+json body come from here and nowhere else.
 */
export const ProblemCatalog = {
  INVALID_INVITATION_PARAM: { status: 400, slug: "invalid-invitation-param", title: "Invalid invitation parameter" },
  INVALID_REGULATION: { status: 400, slug: "invalid-regulation", title: "Invalid regulation" },
  INVALID_REQUEST: { status: 400, slug: "invalid-request", title: "Invalid request" },
  UNAUTHENTICATED: { status: 401, slug: "unauthenticated", title: "Unauthenticated" },
  INSUFFICIENT_SCOPE: { status: 403, slug: "invalid-scope", title: "Insufficient scope" },
  NOT_FOUND: { status: 404, slug: "not-found", title: "Not found" },
  ALREADY_INVITED: { status: 409, slug: "already-invited", title: "Conflict" },
  INVITATION_NOT_PENDING: { status: 409, slug: "invitation-not-pending", title: "Conflict" },
  LAST_TENANT_ADMIN: { status: 409, slug: "last-tenant-admin", title: "Conflict" },
  MEMBER_REMOVED: { status: 409, slug: "member-removed", title: "Conflict" },
  CONFLICT: { status: 409, slug: "conflict", title: "Conflict" },
  REQUEST_TIMEOUT: { status: 408, slug: "request-timeout", title: "Request timeout" },
  PAYLOAD_TOO_LARGE: { status: 413, slug: "payload-too-large", title: "Payload too large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, slug: "unsupported-media-type", title: "Unsupported media type" },
  RATE_LIMITED: { status: 429, slug: "rate-limited", title: "Too many requests" },
  REQUEST_HEADER_FIELDS_TOO_LARGE: { status: 431, slug: "request-header-fields-too-large", title: "Request header fields too large" },
  INTERNAL: { status: 500, slug: "internal", title: "Internal error" },
  UNAVAILABLE: { status: 503, slug: "unavailable", title: "Service unavailable" }
} as const

export type ErrorCode = keyof typeof ProblemCatalog

/** The RFC 9457 body every error of the platform answers with. */
export const ProblemFields = {
  type: Schema.String.annotate({ description: "URI `{errors_url}/<slug>`; its page explains the error." }),
  title: Schema.String,
  status: Schema.Int,
  detail: Schema.String,
  instance: Schema.String.annotate({ description: "Path of the request that failed." }),
  errorCode: Schema.String.annotate({ description: "Stable UPPER_SNAKE code; compare this, never the title." })
}

export class Problem extends Schema.Class<Problem>("Problem")(ProblemFields) {}

export interface ProblemInput {
  readonly errorCode: ErrorCode
  readonly detail: string
  readonly instance: string
  readonly errorsUrl: string
}

export const makeProblem = ({ detail, errorCode, errorsUrl, instance }: ProblemInput): Problem => {
  const row = ProblemCatalog[errorCode]
  return new Problem({
    type: `${errorsUrl.replace(/\/+$/, "")}/${row.slug}`,
    title: row.title,
    status: row.status,
    detail,
    instance,
    errorCode
  })
}

export const problemContentType = "application/problem+json"

/** The HTTP side of a problem schema: its status, and a JSON body of the problem+json media type. */
export const problemAnnotations = (status: number) => <S extends Schema.Top>(self: S): S["Rebuild"] =>
  self.pipe(HttpApiSchema.status(status), HttpApiSchema.asJson({ contentType: problemContentType }))
