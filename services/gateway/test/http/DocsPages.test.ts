import { describe, expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { createHash } from "node:crypto"
import { expectRateLimitHeaders, send, withGateway } from "../support/ProxyHarness.js"

const hashOf = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`

/** The directives of a Content-Security-Policy, by name. */
const directives = (policy: string | null) =>
  new Map((policy ?? "").split(";").map((d) => d.trim().split(/\s+/)).map(([name = "", ...sources]) => [name, sources]))

const expectHardenedHtml = (headers: Headers) => {
  expect(headers.get("x-frame-options")).toBe("DENY")
  expect(headers.get("x-content-type-options")).toBe("nosniff")
  expect(headers.get("referrer-policy")).toBe("no-referrer")
  const policy = directives(headers.get("content-security-policy"))
  expect(policy.get("frame-ancestors")).toEqual(["'none'"])
  expect(policy.get("object-src")).toEqual(["'none'"])
  expect(policy.get("base-uri")).toEqual(["'none'"])
  return policy
}

describe("public port: the documentation pages", () => {
  withGateway(Duration.millis(500))((it) => {
    it.effect("serves the OpenAPI document, the reference and the error pages without a token", () =>
      Effect.gen(function*() {
        const openApi = yield* send("/api/v1/openapi.json")
        expect(openApi.status).toBe(200)
        expect(openApi.headers.get("content-type")).toBe("application/json")
        expect(openApi.headers.get("x-content-type-options")).toBe("nosniff")
        const doc = JSON.parse(openApi.text)
        expect(doc.openapi).toBe("3.1.0")
        expect(doc.servers).toEqual([{ url: "http://localhost:8080/api/v1", description: "Public base URL (includes /api/v1)." }])
        expectRateLimitHeaders(openApi, 25)
        const docs = yield* send("/api/v1/docs")
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
        expect(docs.text).toContain("<script id=\"api-reference\" type=\"application/json\">")
        // Scalar's script comes from this origin, no CDN.
        expect([...docs.text.matchAll(/<script[^>]+src="([^"]*)"/g)].map((m) => m[1])).toEqual(["/api/v1/docs/api-reference.js"])
        expectRateLimitHeaders(docs, 25)
        const page = yield* send("/api/v1/errors/invalid-scope")
        expect(page.status).toBe(200)
        expect(page.text).toContain("<h1>Insufficient scope</h1>")
        expect(page.text).toContain("<code>INSUFFICIENT_SCOPE</code>")
        const unknown = yield* send("/api/v1/errors/no-such-error")
        expect(unknown.status).toBe(404)
        expect(JSON.parse(unknown.text)).toMatchObject({ errorCode: "NOT_FOUND", instance: "/api/v1/errors/no-such-error" })
      }))

    it.effect("lets only the reference's own inline scripts run, and its calls go to this origin only", () =>
      Effect.gen(function*() {
        const docs = yield* send("/api/v1/docs")
        const policy = expectHardenedHtml(docs.headers)
        const inline = [...docs.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => hashOf(m[1]!))
        expect(inline).toHaveLength(1)
        // Scalar compiles a WebAssembly module: that is allowed, JavaScript's eval is not.
        expect(policy.get("script-src")).toEqual(["'self'", "'wasm-unsafe-eval'", ...inline])
        expect(policy.get("connect-src")).toEqual(["'self'"])
      }))

    it.effect("serves the reference's script without a token, as JavaScript a browser may keep", () =>
      Effect.gen(function*() {
        const script = yield* send("/api/v1/docs/api-reference.js")
        expect(script.status).toBe(200)
        expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
        expect(script.headers.get("x-content-type-options")).toBe("nosniff")
        expect(script.headers.get("cache-control")).toBe("public, max-age=86400")
        expect(script.text).toContain("@scalar/api-reference")
        expect(script.text.length).toBeGreaterThan(1_000_000)
        expectRateLimitHeaders(script, 25)
      }))

    it.effect("serves the error pages with their one stylesheet allowed and nothing else", () =>
      Effect.gen(function*() {
        for (const path of ["/api/v1/errors", "/api/v1/errors/request-timeout", "/api/v1/errors/request-header-fields-too-large"]) {
          const page = yield* send(path)
          expect(page.status).toBe(200)
          const policy = expectHardenedHtml(page.headers)
          expect(policy.get("default-src")).toEqual(["'none'"])
          expect(policy.get("style-src")).toEqual([hashOf(/<style>([\s\S]*?)<\/style>/.exec(page.text)![1]!)])
          expect(policy.has("script-src")).toBe(false)
        }
      }))

    it.effect("answers HEAD on the pages like GET, without the body", () =>
      Effect.gen(function*() {
        for (const path of ["/api/v1/docs", "/api/v1/errors/not-found", "/api/v1/openapi.json"]) {
          const [get, head] = [yield* send(path), yield* send(path, { method: "HEAD" })]
          expect({ path, status: head.status, text: head.text }).toEqual({ path, status: 200, text: "" })
          for (const name of ["content-type", "content-length", "content-security-policy", "x-frame-options"]) {
            expect(head.headers.get(name), `${path} ${name}`).toBe(get.headers.get(name))
          }
        }
      }))
  })
})
