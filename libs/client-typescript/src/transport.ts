import { ApiPromise, PagePromise, type ApiResponse } from "./api-promise.js"
import { apiErrorFor, ApiError, NetworkError, NetworkTimeoutError, parseRateLimit, parseRetryAfter, PortfolioError } from "./errors.js"
import { routes } from "./generated/openapi.js"
import type { Item, OperationId, PathParams, Query, RequestBody, Result } from "./types.js"
import { VERSION } from "./version.js"

/** What the SDK hands to `fetch`; the platform's `fetch` and its usual wrappers accept it. */
export interface FetchInit {
  method: string
  headers: Record<string, string>
  body?: string
  signal: AbortSignal
}

/** A `fetch` function: the platform's by default. */
export type Fetch = (url: string, init: FetchInit) => Promise<Response>

export interface ClientOptions {
  /** Personal access token (`ap_pat_...`), sent as `Authorization: Bearer <token>`. */
  token: string
  /** Base URL including `/api/v1`; default `http://localhost:8080/api/v1`. */
  baseUrl?: string | undefined
  /** Milliseconds allowed for each attempt (request and body); default 30 000. */
  timeout?: number | undefined
  /** Headers sent with every request, after (and so over) the SDK's own. */
  headers?: Record<string, string> | undefined
  /** Extra attempts after a 429, a 503 or a connection error; default 2. */
  maxRetries?: number | undefined
  /** The `fetch` to use instead of the platform's (a proxy agent, a test double). */
  fetch?: Fetch | undefined
}

/** Per-call settings, the last argument of every method. */
export interface RequestOptions {
  /** Aborts the call, its retries and its waits; the call then rejects with the signal's reason. */
  signal?: AbortSignal | undefined
  /** Overrides the client's `timeout` for this call. */
  timeout?: number | undefined
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined
  /** Headers for this call, over the client's. */
  headers?: Record<string, string> | undefined
}

export const DEFAULT_BASE_URL = "http://localhost:8080/api/v1"
export const DEFAULT_TIMEOUT = 30_000
export const DEFAULT_MAX_RETRIES = 2
/** A server asking for a longer wait is not waited for: the error surfaces at once. */
export const MAX_RETRY_AFTER_SECONDS = 60
const BACKOFF_BASE_MS = 500
const BACKOFF_CAP_MS = 8_000
const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])

/** Waits `ms` milliseconds, or rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>

export type RequestInput<Id extends OperationId> = {
  query?: Query<Id>
  body?: RequestBody<Id>
} & (PathParams<Id> extends undefined ? { path?: undefined } : { path: PathParams<Id> })

/** Sends the requests of every resource: URL, headers, timeout, retries and the mapping of answers. */
export class Transport {
  readonly #baseUrl: string
  readonly #headers: Record<string, string>
  readonly #timeout: number
  readonly #maxRetries: number
  readonly #fetch: Fetch
  readonly #sleep: Sleep

  constructor(options: ClientOptions, sleep: Sleep) {
    if (typeof options.token !== "string" || options.token.trim() === "") {
      throw new TypeError("PortfolioClient: `token` is required (a personal access token, ap_pat_...)")
    }
    // fetch trims a header value, and would quote the whole token in the error of one it refuses.
    const token = options.token.trim()
    if (!/^[\x21-\x7e]+$/.test(token)) {
      throw new TypeError("PortfolioClient: `token` holds a space, a control or a non-ASCII character; a personal access token is ap_pat_ then letters and digits")
    }
    this.#baseUrl = checkBaseUrl(options.baseUrl ?? DEFAULT_BASE_URL)
    this.#timeout = checkTimeout(options.timeout ?? DEFAULT_TIMEOUT)
    this.#maxRetries = checkMaxRetries(options.maxRetries ?? DEFAULT_MAX_RETRIES)
    const platformFetch = globalThis.fetch as Fetch | undefined
    if (options.fetch === undefined && typeof platformFetch !== "function") {
      throw new TypeError("PortfolioClient: this platform has no global fetch (Node.js 18 or later has one); pass `fetch`")
    }
    // Looked up at each request, so that a fetch patched after the client was made (by a test or
    // an instrumentation) is honoured.
    this.#fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init))
    this.#headers = {
      accept: "application/json",
      "user-agent": `architecture-portfolio-typescript/${VERSION}`,
      authorization: `Bearer ${token}`,
      ...checkHeaders(options.headers)
    }
    this.#sleep = sleep
  }

  /** Calls an operation that answers one result. */
  request<Id extends OperationId>(id: Id, input: RequestInput<Id>, options: RequestOptions = {}): ApiPromise<Result<Id>> {
    const route = routes[id]
    // Started from a resolved promise so that a bad argument rejects the call instead of throwing.
    const answer = Promise.resolve().then(() => {
      const body = input.body === undefined ? undefined : JSON.stringify(input.body)
      return this.#send(route.method, this.#url(route.path, input), body, options)
    })
    return new ApiPromise(answer as Promise<ApiResponse<Result<Id>>>)
  }

  /** Calls a list operation: the promise of its first page that iterates over all of them. */
  list<Id extends OperationId>(id: Id, input: RequestInput<Id>, options: RequestOptions = {}): PagePromise<Item<Id>> {
    const route = routes[id]
    return new PagePromise(Promise.resolve().then(() => this.#url(route.path, input)), async (url) => {
      // The token goes only to the API: a next link elsewhere is a misconfigured or hostile answer.
      if (!url.startsWith(`${this.#baseUrl}/`)) throw new PortfolioError(`Refusing to follow a next-page link outside ${this.#baseUrl}: ${url}`)
      const page = await this.#send(route.method, url, undefined, options)
      if (!Array.isArray(page.data)) throw new PortfolioError(`${route.method} ${url}: the list answered ${page.data === undefined ? "no body" : typeof page.data} where a JSON array was expected`)
      return page as ApiResponse<Array<Item<Id>>>
    })
  }

  #url(template: string, input: { path?: unknown; query?: unknown }): string {
    const params = (input.path ?? {}) as Record<string, unknown>
    const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = params[name]
      // An empty segment would address another endpoint (`/applications/` is the list).
      if (typeof value !== "string" || value === "") throw new TypeError(`\`${name}\` must be a non-empty string`)
      // So would a dot segment, which URL parsers remove, encoded (%2E) or not: `/applications/..` is `/`.
      if (value === "." || value === "..") throw new TypeError(`\`${name}\` cannot be "${value}", a URL drops such a path segment`)
      return encodeURIComponent(value)
    })
    const query = new URLSearchParams()
    for (const [name, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
      if (value !== undefined && value !== null) query.append(name, String(value))
    }
    const search = query.toString()
    return `${this.#baseUrl}${path}${search === "" ? "" : `?${search}`}`
  }

  async #send(method: string, url: string, body: string | undefined, options: RequestOptions): Promise<ApiResponse<unknown>> {
    const maxRetries = options.maxRetries === undefined ? this.#maxRetries : checkMaxRetries(options.maxRetries)
    const timeout = options.timeout === undefined ? this.#timeout : checkTimeout(options.timeout)
    const headers = { ...this.#headers, ...(body === undefined ? {} : { "content-type": "application/json" }), ...checkHeaders(options.headers) }
    for (let retry = 0; ; retry++) {
      try {
        return await this.#attempt(method, url, headers, body, timeout, options.signal)
      } catch (error) {
        const delay = retry < maxRetries ? retryDelay(error, method, retry) : null
        if (delay === null) throw error
        await this.#sleep(delay, options.signal)
      }
    }
  }

  async #attempt(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    timeout: number,
    signal: AbortSignal | undefined
  ): Promise<ApiResponse<unknown>> {
    signal?.throwIfAborted()
    const controller = new AbortController()
    // Not AbortSignal.any: Node.js 18 lacks it.
    const abort = () => controller.abort(signal?.reason)
    signal?.addEventListener("abort", abort, { once: true })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort(new NetworkTimeoutError(`${method} ${url} timed out after ${timeout} ms`, timeout))
    }, timeout)
    const failure = (cause: unknown, what: string): unknown => {
      if (timedOut) return controller.signal.reason
      if (signal?.aborted) return signal.reason
      return new NetworkError(`${method} ${url}: ${what}: ${describe(cause)}`, { cause })
    }
    try {
      const init: FetchInit = { method, headers: { ...headers }, signal: controller.signal }
      if (body !== undefined) init.body = body
      // Called as a plain function: browsers refuse a fetch called on another object than window.
      const fetch = this.#fetch
      // Raced against the signal too, for a fetch that ignores it.
      const response = await untilAborted(Promise.resolve().then(() => fetch(url, init)), controller.signal).catch((cause: unknown) => {
        throw failure(cause, "no answer")
      })
      const text = await untilAborted(response.text(), controller.signal).catch((cause: unknown) => {
        throw failure(cause, "the body could not be read")
      })
      if (!response.ok) throw apiErrorFor(response.status, response.headers, parseErrorBody(text))
      return {
        data: parseSuccessBody(text, response.status, method, url),
        response,
        rateLimit: parseRateLimit(response.headers),
        requestId: response.headers.get("x-request-id")
      }
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener("abort", abort)
    }
  }
}

/**
 * Milliseconds to wait before the next attempt, or `null` when `error` is not retried: 429 and 503
 * wait `Retry-After` (up to 60 s, past which they surface) or back off; a connection error backs off
 * for an idempotent method only, since a POST may have reached the server.
 */
const retryDelay = (error: unknown, method: string, retry: number): number | null => {
  if (error instanceof ApiError) {
    if (error.status !== 429 && error.status !== 503) return null
    const retryAfter = parseRetryAfter(error.headers)
    if (retryAfter === null) return backoff(retry)
    return retryAfter > MAX_RETRY_AFTER_SECONDS ? null : retryAfter * 1000
  }
  if (error instanceof NetworkError && !(error instanceof NetworkTimeoutError)) return IDEMPOTENT.has(method) ? backoff(retry) : null
  return null
}

/** Exponential back-off with full jitter: uniform in [0, min(8 s, 0.5 s * 2^retry)). */
const backoff = (retry: number) => Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry)

const untilAborted = <T>(promise: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    if (signal.aborted) return onAbort()
    signal.addEventListener("abort", onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort))
  })

/** Node.js's fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND...) is its cause. */
const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message
}

const parseErrorBody = (text: string): unknown => {
  if (text === "") return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const parseSuccessBody = (text: string, status: number, method: string, url: string): unknown => {
  if (text === "") return undefined
  try {
    return JSON.parse(text)
  } catch (cause) {
    throw new PortfolioError(`${method} ${url}: the ${status} answer is not JSON: ${text.slice(0, 200)}`, { cause })
  }
}

/**
 * The caller's headers under lower-case names (so that they replace the SDK's own whatever their
 * case), refused up front when fetch would refuse them: its error quotes the value, which may be a
 * secret, and would otherwise read as a connection failure and be retried.
 */
const checkHeaders = (headers: Record<string, string> | undefined): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers ?? {}).map(([name, value]) => {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new TypeError(`\`headers\`: ${JSON.stringify(name)} is not a header name`)
      // What fetch accepts: surrounding spaces and line breaks are trimmed, none may stay inside.
      const trimmed = typeof value === "string" ? value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "") : null
      if (trimmed === null || !/^[^\0\r\n\u0100-\uffff]*$/.test(trimmed)) {
        throw new TypeError(`\`headers\`: the value of ${name} is not a string of Latin-1 characters without line breaks`)
      }
      return [name.toLowerCase(), trimmed]
    })
  )

/** The base URL as the URL parser writes it (lower-case host, no default port), without its trailing slashes. */
const checkBaseUrl = (baseUrl: string): string => {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw new TypeError(`PortfolioClient: \`baseUrl\` is not an absolute http(s) URL: ${baseUrl}`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`PortfolioClient: \`baseUrl\` is not an absolute http(s) URL: ${baseUrl}`)
  // fetch refuses credentials in a URL, and error messages quote the URL.
  if (url.username !== "" || url.password !== "") throw new TypeError("PortfolioClient: `baseUrl` must not hold a user name or password")
  if (url.search !== "" || url.hash !== "") throw new TypeError("PortfolioClient: `baseUrl` must not have a query or a fragment, the paths are appended to it")
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "")
}

const checkTimeout = (timeout: number) => {
  // setTimeout fires at once past 2^31 - 1 ms.
  if (!(timeout > 0 && timeout <= 2_147_483_647)) throw new RangeError(`\`timeout\` must be a number of milliseconds from 1 to 2147483647, not ${timeout}`)
  return timeout
}

const checkMaxRetries = (maxRetries: number) => {
  if (!(Number.isInteger(maxRetries) && maxRetries >= 0)) throw new RangeError(`\`maxRetries\` must be an integer of 0 or more, not ${maxRetries}`)
  return maxRetries
}
