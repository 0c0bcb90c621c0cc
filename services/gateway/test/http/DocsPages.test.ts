import { describe, expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { expectRateLimitHeaders, send, withGateway } from "../support/ProxyHarness.js"

describe("public port: the documentation pages", () => {
  withGateway(Duration.millis(500))((it) => {
    it.effect("serves the OpenAPI document, the reference and the error pages without a token", () =>
      Effect.gen(function*() {
        const openApi = yield* send("/api/v1/openapi.json")
        expect(openApi.status).toBe(200)
        expect(openApi.headers.get("content-type")).toBe("application/json")
        const doc = JSON.parse(openApi.text)
        expect(doc.openapi).toBe("3.1.0")
        expect(doc.servers).toEqual([{ url: "http://localhost:8080/api/v1", description: "Public base URL (includes /api/v1)." }])
        expectRateLimitHeaders(openApi, 25)
        const docs = yield* send("/api/v1/docs")
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
        expect(docs.text).toContain("<script id=\"api-reference\" type=\"application/json\">")
        expect(docs.text).not.toMatch(/<script[^>]+src=/)
        expectRateLimitHeaders(docs, 25)
        const page = yield* send("/api/v1/errors/invalid-scope")
        expect(page.status).toBe(200)
        expect(page.text).toContain("<h1>Insufficient scope</h1>")
        expect(page.text).toContain("<code>INSUFFICIENT_SCOPE</code>")
        const unknown = yield* send("/api/v1/errors/no-such-error")
        expect(unknown.status).toBe(404)
        expect(JSON.parse(unknown.text)).toMatchObject({ errorCode: "NOT_FOUND", instance: "/api/v1/errors/no-such-error" })
      }))
  })
})
