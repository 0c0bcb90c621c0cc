import { PortfolioClient, type ClientOptions, type Fetch } from "../src/index.js"

/** One request as the SDK handed it to `fetch`. */
export interface SentRequest {
  url: URL
  method: string
  headers: Record<string, string>
  /** The parsed JSON body, `null` when none was sent. */
  body: unknown
  signal: AbortSignal
}

type Answer = Response | Error | ((request: SentRequest) => Response | Promise<Response>)

/**
 * A `fetch` that records every request and gives the answers in order: a Response, an Error to
 * reject with (a connection failure), or a function of the request. Past the last answer it fails the test.
 */
export const fakeFetch = (...answers: Array<Answer>) => {
  const requests: Array<SentRequest> = []
  const fetch: Fetch = async (url, init) => {
    const request: SentRequest = {
      url: new URL(url),
      method: init.method,
      headers: init.headers,
      body: init.body === undefined ? null : JSON.parse(init.body),
      signal: init.signal
    }
    requests.push(request)
    const answer = answers[requests.length - 1]
    if (answer === undefined) throw new Error(`unexpected request #${requests.length}: ${init.method} ${url}`)
    if (answer instanceof Error) throw answer
    return typeof answer === "function" ? answer(request) : answer
  }
  return { fetch, requests }
}

export const rateLimitHeaders = { "x-ratelimit-limit": "180", "x-ratelimit-remaining": "179", "x-ratelimit-reset": "1795340460", "x-request-id": "req_test" }

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...rateLimitHeaders, ...headers } })

export const problem = (status: number, errorCode: string, headers: Record<string, string> = {}) =>
  new Response(
    JSON.stringify({ type: `http://localhost:8080/api/v1/errors/${errorCode.toLowerCase()}`, title: "Title", status, detail: `detail of ${errorCode}`, instance: "/api/v1/x", errorCode }),
    { status, headers: { "content-type": "application/problem+json", ...rateLimitHeaders, ...headers } }
  )

export const noContent = () => new Response(null, { status: 204, headers: rateLimitHeaders })

/** A connection failure as Node's fetch reports it. */
export const connectionRefused = () => new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) })

/** A client that records its waits between attempts instead of waiting. */
export class InstantClient extends PortfolioClient {
  readonly sleeps: Array<number> = []

  protected override sleep(ms: number): Promise<void> {
    this.sleeps.push(ms)
    return Promise.resolve()
  }
}

export const baseUrl = "https://api.example.test/api/v1"

export const instantClient = (fetch: Fetch, options: Partial<ClientOptions> = {}) => new InstantClient({ token: "ap_pat_test", baseUrl, fetch, ...options })

/** The rejection of `promise`, failing the test when it fulfils. */
export const rejection = async (promise: PromiseLike<unknown>): Promise<any> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}
