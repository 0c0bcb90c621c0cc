import type { ErrorCode } from "./types.js"

/** The rate-limit headers of an answer: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`. */
export interface RateLimit {
  /** Requests allowed in any 60-second window. */
  limit: number
  /** Requests still allowed in the current window. */
  remaining: number
  /** UTC epoch seconds at which one more request becomes possible. */
  reset: number
}

/** Reads the three rate-limit headers; `null` unless all three are there and numeric. */
export const parseRateLimit = (headers: Headers): RateLimit | null => {
  const limit = headerNumber(headers, "x-ratelimit-limit")
  const remaining = headerNumber(headers, "x-ratelimit-remaining")
  const reset = headerNumber(headers, "x-ratelimit-reset")
  return limit === null || remaining === null || reset === null ? null : { limit, remaining, reset }
}

const headerNumber = (headers: Headers, name: string): number | null => {
  const value = headers.get(name)?.trim()
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : null
}

const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
const TIME = "\\d{2}:\\d{2}:\\d{2}"
/**
 * The three forms of an HTTP-date (RFC 9110 section 5.6.7): IMF-fixdate, RFC 850 and asctime (no
 * zone: GMT). Checked before `Date.parse`, which reads about anything as a date ("1.5" is January 5,
 * 2001) and would turn a malformed header into "retry at once".
 */
const IMF_OR_RFC850 = new RegExp(`^(?:${DAY}, \\d{2} ${MONTH} \\d{4}|${LONG_DAY}, \\d{2}-${MONTH}-\\d{2}) ${TIME} GMT$`, "i")
const ASCTIME = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`, "i")

/** `Retry-After` in seconds: delay-seconds, or an HTTP-date counted from now; `null` when absent or unreadable. */
export const parseRetryAfter = (headers: Headers, now: number = Date.now()): number | null => {
  const value = headers.get("retry-after")?.trim()
  if (value === undefined || value === "") return null
  if (/^\d+$/.test(value)) return Number(value)
  const date = IMF_OR_RFC850.test(value) ? Date.parse(value) : ASCTIME.test(value) ? Date.parse(`${value} GMT`) : Number.NaN
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000))
}

/** The property that names, on each error class's prototype, the class it is, in every copy of the SDK. */
const BRAND = Symbol.for("@architecture-portfolio/client:error-class")

/** Base class of every error the SDK throws on purpose. */
export class PortfolioError extends Error {
  override name = "PortfolioError"

  /**
   * `instanceof` holds across copies of the SDK too: an application whose ESM code imports the
   * package while a CommonJS dependency requires it loads two builds, whose classes differ. An
   * error is then an instance of a class when its prototype chain has the prototype of the class
   * of the same name in any copy. A caller's own subclass keeps the ordinary rule.
   */
  static override [Symbol.hasInstance]<T>(this: abstract new (...args: never) => T, value: unknown): value is T {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    if (!Object.hasOwn(this.prototype, BRAND) || typeof value !== "object" || value === null) return false
    const brand = (this.prototype as Record<symbol, unknown>)[BRAND]
    for (let prototype: unknown = Object.getPrototypeOf(value); prototype !== null; prototype = Object.getPrototypeOf(prototype)) {
      if (Object.hasOwn(prototype as object, BRAND) && (prototype as Record<symbol, unknown>)[BRAND] === brand) return true
    }
    return false
  }
}

/**
 * The API answered with an error status. The fields come from the problem details
 * (`application/problem+json`); they are `null` when the answer carried none (a proxy's HTML page).
 */
export class ApiError extends PortfolioError {
  override name = "ApiError"
  /** The HTTP status of the answer. */
  readonly status: number
  /** The stable code to compare (`NOT_FOUND`, `ALREADY_INVITED`...), never the title. */
  readonly errorCode: ErrorCode | (string & {}) | null
  readonly title: string | null
  readonly detail: string | null
  /** The path of the request that failed. */
  readonly instance: string | null
  /** URI of the page explaining the error. */
  readonly type: string | null
  /** The `X-Request-Id` of the answer, to quote when reporting a problem. */
  readonly requestId: string | null
  readonly rateLimit: RateLimit | null
  readonly headers: Headers
  /** The parsed JSON body, or the raw text when the body is not JSON. */
  readonly body: unknown

  constructor(status: number, headers: Headers, body: unknown) {
    const problem = isRecord(body) ? body : {}
    const text = (key: string) => (typeof problem[key] === "string" ? (problem[key] as string) : null)
    const errorCode = text("errorCode")
    const detail = text("detail")
    const requestId = headers.get("x-request-id")
    const summary = detail ?? text("title") ?? (typeof body === "string" && body.trim() !== "" ? abbreviate(body.trim()) : "no details")
    super(`${status}${errorCode === null ? "" : ` ${errorCode}`}: ${summary}${requestId === null ? "" : ` (request ${requestId})`}`)
    this.status = status
    this.errorCode = errorCode
    this.title = text("title")
    this.detail = detail
    this.instance = text("instance")
    this.type = text("type")
    this.requestId = requestId
    this.rateLimit = parseRateLimit(headers)
    this.headers = headers
    this.body = body
  }
}

/** 400: the request does not match the endpoint (`INVALID_REQUEST`) or one of its rules refused it. */
export class BadRequestError extends ApiError {
  override name = "BadRequestError"
}

/** 401: the token is missing, malformed, unknown, revoked or expired; retrying with it is pointless. */
export class AuthenticationError extends ApiError {
  override name = "AuthenticationError"
}

/** 403: the token's scope, or its holder's role, does not allow the request (`INSUFFICIENT_SCOPE`). */
export class PermissionDeniedError extends ApiError {
  override name = "PermissionDeniedError"
}

/** 404: no such resource in the caller's tenant, or no such endpoint. */
export class NotFoundError extends ApiError {
  override name = "NotFoundError"
}

/** 409: the request conflicts with the current state (`ALREADY_INVITED`, `INVITATION_NOT_PENDING`, `LAST_TENANT_ADMIN`). */
export class ConflictError extends ApiError {
  override name = "ConflictError"
}

/** 429: too many requests in the last 60 seconds. */
export class RateLimitError extends ApiError {
  override name = "RateLimitError"
  /** Seconds to wait, from `Retry-After`; `null` when the answer did not say. */
  readonly retryAfter: number | null

  constructor(status: number, headers: Headers, body: unknown) {
    super(status, headers, body)
    this.retryAfter = parseRetryAfter(headers)
  }
}

/** 500 or above: a failure on the server's side. */
export class ServerError extends ApiError {
  override name = "ServerError"
}

/** 503: a service behind the API is down or did not answer in time. */
export class ServiceUnavailableError extends ServerError {
  override name = "ServiceUnavailableError"
  /** Seconds to wait, from `Retry-After`; `null` when the answer did not say. */
  readonly retryAfter: number | null

  constructor(status: number, headers: Headers, body: unknown) {
    super(status, headers, body)
    this.retryAfter = parseRetryAfter(headers)
  }
}

/** The error of the class that matches `status`; statuses without a class of their own give a plain `ApiError`. */
export const apiErrorFor = (status: number, headers: Headers, body: unknown): ApiError => {
  switch (status) {
    case 400:
      return new BadRequestError(status, headers, body)
    case 401:
      return new AuthenticationError(status, headers, body)
    case 403:
      return new PermissionDeniedError(status, headers, body)
    case 404:
      return new NotFoundError(status, headers, body)
    case 409:
      return new ConflictError(status, headers, body)
    case 429:
      return new RateLimitError(status, headers, body)
    case 503:
      return new ServiceUnavailableError(status, headers, body)
    default:
      return status >= 500 ? new ServerError(status, headers, body) : new ApiError(status, headers, body)
  }
}

/**
 * No usable answer: the connection was refused or reset, the name did not resolve, or the body could
 * not be read. Not an `ApiError`: the server may never have seen the request.
 */
export class NetworkError extends PortfolioError {
  override name = "NetworkError"
}

/** The attempt took longer than the client's `timeout`; timeouts are not retried. */
export class NetworkTimeoutError extends NetworkError {
  override name = "NetworkTimeoutError"
  /** The timeout that elapsed, in milliseconds. */
  readonly timeout: number

  constructor(message: string, timeout: number) {
    super(message)
    this.timeout = timeout
  }
}

// Literal names, not `constructor.name`, which a minifier may change.
for (const [name, errorClass] of Object.entries({
  PortfolioError,
  ApiError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  ServerError,
  ServiceUnavailableError,
  NetworkError,
  NetworkTimeoutError
})) {
  Object.defineProperty(errorClass.prototype, BRAND, { value: name })
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const abbreviate = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text)
