import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import * as sdk from "../src/index.js"
import { InstantClient, type SentRequest } from "./support.js"

/**
 * The shared contract fixtures of both official SDKs (libs/client-fixtures/cases.json, format in the
 * README beside it): each case's call must send exactly its requests and give its result or error.
 */
interface Exchange {
  request: { method: string; path: string; query: Record<string, string>; headers: Record<string, string>; body: unknown }
  response: { status: number; headers: Record<string, string>; body: unknown }
  wait?: number | "backoff"
}
interface Case {
  name: string
  operationId: string | null
  call: { resource: string; method: string; args: Array<unknown>; options?: Record<string, unknown>; client?: Record<string, unknown>; paginate?: boolean }
  exchanges: Array<Exchange>
  expect: { result: unknown } | { error: { class: string; status: number; errorCode: string | null; retryAfter?: number; requestId?: string } }
}

const casesUrl = new URL("../../client-fixtures/cases.json", import.meta.url)
const cases: Array<Case> = JSON.parse(readFileSync(casesUrl, "utf8")).cases
const basePath = "/api/v1"

const toResponse = ({ status, headers, body }: Exchange["response"]) => {
  const isJson = /json/i.test(headers["content-type"] ?? "")
  const payload = body === null ? null : isJson || typeof body !== "string" ? JSON.stringify(body) : body
  return new Response(payload, { status, headers })
}

const checkRequest = (sent: SentRequest, expected: Exchange["request"], label: string) => {
  expect(sent.method, label).toBe(expected.method)
  expect(sent.url.origin, label).toBe("https://api.example.test")
  expect(sent.url.pathname.startsWith(`${basePath}/`), label).toBe(true)
  expect(sent.url.pathname.slice(basePath.length), label).toBe(expected.path)
  const query: Record<string, string> = {}
  for (const [name, value] of sent.url.searchParams) {
    expect(query, `${label}: query parameter ${name} sent twice`).not.toHaveProperty(name)
    query[name] = value
  }
  expect(query, label).toEqual(expected.query)
  const headers = Object.fromEntries(Object.entries(sent.headers).map(([name, value]) => [name.toLowerCase(), value]))
  expect(headers, label).toMatchObject(expected.headers)
  expect(sent.body, label).toEqual(expected.body)
}

/**
 * The waits a case must ask for: one before each retry (every answer but the last that is not a
 * success; a success before the last is a page of a `paginate` case), each exchange's `wait`, by
 * default its Retry-After seconds, else a back-off below the cap of retry n of that request.
 */
const checkSleeps = (sleeps: Array<number>, exchanges: Array<Exchange>, label: string) => {
  const retried: Array<{ exchange: Exchange; retry: number }> = []
  let retry = 0
  for (const exchange of exchanges.slice(0, -1)) {
    if (exchange.response.status >= 200 && exchange.response.status < 300) retry = 0
    else retried.push({ exchange, retry: retry++ })
  }
  expect(sleeps, label).toHaveLength(retried.length)
  retried.forEach(({ exchange, retry }, index) => {
    const retryAfter = exchange.response.headers["retry-after"] ?? ""
    const wait = exchange.wait ?? (/^\d+$/.test(retryAfter) ? Number(retryAfter) : "backoff")
    if (wait !== "backoff") expect(sleeps[index], label).toBe(wait * 1000)
    else {
      expect(sleeps[index], label).toBeGreaterThanOrEqual(0)
      expect(sleeps[index], label).toBeLessThan(Math.min(8000, 500 * 2 ** retry))
    }
  })
}

const collect = async (items: AsyncIterable<unknown>) => {
  const all: Array<unknown> = []
  for await (const item of items) all.push(item)
  return all
}

describe("the shared contract cases (libs/client-fixtures/cases.json)", () => {
  it("are there to run", () => {
    expect(cases.length).toBeGreaterThanOrEqual(15)
  })

  for (const testCase of cases) {
    it(testCase.name, async () => {
      const sent: Array<SentRequest> = []
      const fetch: sdk.Fetch = async (url, init) => {
        const exchange = testCase.exchanges[sent.length]
        sent.push({ url: new URL(url), method: init.method, headers: init.headers, body: init.body === undefined ? null : JSON.parse(init.body), signal: init.signal })
        if (exchange === undefined) throw new Error(`request #${sent.length} beyond the case's exchanges: ${init.method} ${url}`)
        return toResponse(exchange.response)
      }
      const client = new InstantClient({ token: "ap_pat_test", baseUrl: "https://api.example.test/api/v1", ...testCase.call.client, fetch })
      const resource = (client as unknown as Record<string, Record<string, (...args: Array<unknown>) => PromiseLike<unknown>>>)[testCase.call.resource]
      const method = resource?.[testCase.call.method]
      expect(method, `${testCase.call.resource}.${testCase.call.method}`).toBeTypeOf("function")
      const args = testCase.call.options === undefined ? testCase.call.args : [...testCase.call.args, testCase.call.options]

      const call = method!.apply(resource, args)
      const outcome = await (testCase.call.paginate === true ? collect(call as unknown as AsyncIterable<unknown>) : call).then(
        (result) => ({ result }),
        (error: unknown) => ({ error })
      )

      expect(sent.length, "requests sent").toBe(testCase.exchanges.length)
      sent.forEach((request, index) => checkRequest(request, testCase.exchanges[index]!.request, `request #${index + 1}`))
      checkSleeps(client.sleeps, testCase.exchanges, "waits between attempts")

      if ("result" in testCase.expect) {
        if ("error" in outcome) throw outcome.error
        expect(outcome.result ?? null).toEqual(testCase.expect.result)
      } else {
        expect("error" in outcome, "the call should have failed").toBe(true)
        const error = (outcome as { error: unknown }).error
        const expected = testCase.expect.error
        const errorClass = (sdk as unknown as Record<string, unknown>)[expected.class]
        expect(errorClass, `${expected.class} is exported`).toBeTypeOf("function")
        expect(error).toBeInstanceOf(sdk.ApiError)
        expect((error as object).constructor, "the most specific error class").toBe(errorClass)
        const apiError = error as sdk.ApiError & { retryAfter?: number | null }
        expect(apiError.status).toBe(expected.status)
        expect(apiError.errorCode ?? null).toBe(expected.errorCode)
        if (expected.retryAfter !== undefined) expect(apiError.retryAfter).toBe(expected.retryAfter)
        if (expected.requestId !== undefined) expect(apiError.requestId).toBe(expected.requestId)
      }
    })
  }
})
