import { describe, expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { issue, rawRequest, rawSocket, send, withGateway } from "../support/ProxyHarness.js"

describe("public proxy: reading the request target", () => {
  withGateway(Duration.millis(500))((it) => {
    it.effect("answers a malformed request target with 400 INVALID_REQUEST and keeps serving", () =>
      Effect.gen(function*() {
        const targets = ["http://[bad/x", "http://x:abc/", "http://:99999/x", "http://[::1/", "*", "ftp://gateway/api/v1/referentiel/functions"]
        for (const target of targets) {
          const answer = yield* rawSocket(`GET ${target} HTTP/1.1\r\nHost: gateway\r\nX-Request-Id: raw-1\r\nConnection: close\r\n\r\n`)
          expect({ target, status: answer.status, contentType: answer.headers["content-type"] }).toEqual({
            target,
            status: 400,
            contentType: "application/problem+json"
          })
          expect(JSON.parse(answer.body)).toMatchObject({ errorCode: "INVALID_REQUEST", status: 400, title: "Invalid request" })
          expect(answer.headers["x-ratelimit-limit"]).toBe("25")
          expect(answer.headers["x-ratelimit-remaining"]).toMatch(/^\d+$/)
          expect(answer.headers["x-ratelimit-reset"]).toMatch(/^\d+$/)
          expect(answer.headers["x-request-id"]).toBe("raw-1")
        }
        // The gateway is still there, and still takes the absolute form RFC 9112 asks servers to accept.
        const token = yield* issue("viewer", "read")
        const absolute = yield* rawSocket(
          `GET http://gateway/api/v1/referentiel/functions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`
        )
        expect(absolute.status).toBe(200)
        expect((yield* send("/api/v1/referentiel/functions", { token })).status).toBe(200)
      }))
    it.effect("reads an origin-form target starting with // as a path, not as another host", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const answer = yield* rawSocket(
          `GET //elsewhere/api/v1/referentiel/functions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`
        )
        expect(answer.status).toBe(404)
        expect(JSON.parse(answer.body)).toMatchObject({ errorCode: "NOT_FOUND", instance: "//elsewhere/api/v1/referentiel/functions" })
        // `new URL("//", base)` throws; as a path it is simply not part of the API.
        const bare = yield* rawSocket("GET // HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n")
        expect({ status: bare.status, body: JSON.parse(bare.body) }).toMatchObject({ status: 404, body: { errorCode: "NOT_FOUND", instance: "//" } })
      }))
    it.effect("refuses dot segments rather than normalising them: what is checked, signed and forwarded is what came", () =>
      Effect.gen(function*() {
        const viewer = yield* issue("viewer", "read")
        const answer = yield* rawRequest({
          method: "GET",
          path: "/api/v1/referentiel/%2e%2e/tenant/invitations",
          headers: { authorization: `Bearer ${viewer}` }
        })
        expect(answer.status).toBe(400)
        expect(JSON.parse(answer.text)).toMatchObject({ errorCode: "INVALID_REQUEST", instance: "/api/v1/referentiel/%2e%2e/tenant/invitations" })
      }))
  })
})
