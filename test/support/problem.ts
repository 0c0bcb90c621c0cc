import { expect } from "vitest"
import type { Reply } from "./http.js"
import { errorsUrl } from "./system.js"

/**
 * The problem catalogue as docs/product-rules.md#errors writes it. Kept here rather than imported from
 * libs/domain so that the suite checks the code against the product decision, not against itself.
 */
export const catalogue = {
  INVALID_INVITATION_PARAM: { status: 400, slug: "invalid-invitation-param", title: "Invalid invitation parameter" },
  INVALID_REGULATION: { status: 400, slug: "invalid-regulation", title: "Invalid regulation" },
  INVALID_REQUEST: { status: 400, slug: "invalid-request", title: "Invalid request" },
  UNAUTHENTICATED: { status: 401, slug: "unauthenticated", title: "Unauthenticated" },
  INSUFFICIENT_SCOPE: { status: 403, slug: "invalid-scope", title: "Insufficient scope" },
  NOT_FOUND: { status: 404, slug: "not-found", title: "Not found" },
  ALREADY_INVITED: { status: 409, slug: "already-invited", title: "Conflict" },
  INVITATION_NOT_PENDING: { status: 409, slug: "invitation-not-pending", title: "Conflict" },
  // Decided by the project (README) beyond the first table of docs/product-rules.md#errors.
  LAST_TENANT_ADMIN: { status: 409, slug: "last-tenant-admin", title: "Conflict" },
  MEMBER_REMOVED: { status: 409, slug: "member-removed", title: "Conflict" },
  REQUEST_TIMEOUT: { status: 408, slug: "request-timeout", title: "Request timeout" },
  PAYLOAD_TOO_LARGE: { status: 413, slug: "payload-too-large", title: "Payload too large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, slug: "unsupported-media-type", title: "Unsupported media type" },
  REQUEST_HEADER_FIELDS_TOO_LARGE: { status: 431, slug: "request-header-fields-too-large", title: "Request header fields too large" },
  RATE_LIMITED: { status: 429, slug: "rate-limited", title: "Too many requests" },
  INTERNAL: { status: 500, slug: "internal", title: "Internal error" },
  UNAVAILABLE: { status: 503, slug: "unavailable", title: "Service unavailable" }
} as const
export type ErrorCode = keyof typeof catalogue

/** The `instance` of a problem the gateway answers: the public path, under /api/v1. */
export const prefixed = (path: string) => `/api/v1${path}`

/** Asserts an RFC 9457 body with the decided errorCode, for the request path `instance`. */
export const expectProblem = (reply: Reply, errorCode: ErrorCode, instance: string) => {
  const row = catalogue[errorCode]
  expect({ status: reply.status, contentType: reply.contentType }).toEqual({
    status: row.status,
    contentType: expect.stringMatching(/^application\/problem\+json(;|$)/)
  })
  expect(reply.body).toEqual({
    type: `${errorsUrl}/${row.slug}`,
    title: row.title,
    status: row.status,
    detail: expect.stringMatching(/\S/),
    instance,
    errorCode
  })
}

/** Any 4xx problem+json body, whichever code: for inputs where several refusals are defensible. */
export const expectClientProblem = (reply: Reply, instance: string) => {
  expect(reply.status, `${reply.status} ${reply.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400)
  expect(reply.status, `${reply.status} ${reply.text.slice(0, 300)}`).toBeLessThan(500)
  const entry = Object.entries(catalogue).find(([code]) => code === reply.body?.errorCode)
  expect(entry, `errorCode of ${reply.text.slice(0, 300)}`).toBeDefined()
  expectProblem(reply, entry![0] as ErrorCode, instance)
}

/** Every response under /api/** carries the three rate-limit headers (docs/product-rules.md#rate-limiting). */
export const expectRateLimitHeaders = (reply: Reply) => {
  const nowSeconds = Date.now() / 1000
  const reset = Number(reply.headers.get("x-ratelimit-reset"))
  const limit = Number(reply.headers.get("x-ratelimit-limit"))
  const remaining = Number(reply.headers.get("x-ratelimit-remaining"))
  expect({
    reset: Number.isInteger(reset) && reset >= Math.floor(nowSeconds) - 1 && reset <= Math.ceil(nowSeconds) + 61,
    limit: Number.isInteger(limit) && limit > 0,
    remaining: Number.isInteger(remaining) && remaining >= 0 && remaining <= limit
  }, `rate-limit headers ${JSON.stringify(Object.fromEntries(reply.headers))}`).toEqual({ reset: true, limit: true, remaining: true })
}

/** The body of a problem, `instance` set aside: two refusals that must not tell each other apart. */
export const withoutInstance = (reply: Reply) => ({ status: reply.status, contentType: reply.contentType, body: { ...reply.body, instance: "(path)" } })

export const expectNoContent = (reply: Reply) => {
  expect({ status: reply.status, text: reply.text }).toEqual({ status: 204, text: "" })
}
