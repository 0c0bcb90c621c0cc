import { describe, expect } from "@effect/vitest"
import type { HttpLimits } from "@portfolio/platform/http"
import { Duration, Effect } from "effect"
import { exchange, RawConnection } from "@portfolio/platform/testing"
import { servePublic } from "../../src/adapters/http/PublicServer.js"
import { Harness, issue, send, withGateway } from "../support/ProxyHarness.js"

/**
 * Short timeouts and a small bound, so that a case sees them at work without waiting long; the
 * request timeout below the harness's upstream timeout (500 ms), as the defaults are (20 s, 25 s).
 */
const tight: HttpLimits = { keepAliveTimeoutMs: 600_000, headersTimeoutMs: 150, requestTimeoutMs: 300, maxConnectionsPerClient: 2 }

/** A second public server beside the harness's, with the tight limits, for the case's scope. */
const tightGateway = Effect.map(servePublic({ port: 0, host: "127.0.0.1" }, tight), (address) => address.port)

const problemOf = (answer: { status: number; headers: Record<string, string>; body: string }) => ({
  status: answer.status,
  contentType: answer.headers["content-type"],
  errorCode: answer.body.length > 0 ? JSON.parse(answer.body).errorCode : undefined
})

/** Headers whose values differ between two answers to the same request, or frame only the body. */
const varying = new Set(["date", "x-request-id", "x-ratelimit-remaining", "x-ratelimit-reset", "transfer-encoding", "content-length", "connection", "keep-alive"])
const stableHeaders = (headers: Headers) => [...headers.entries()].filter(([name]) => !varying.has(name))

describe("public port: what is not a proxied call", () => {
  withGateway(Duration.millis(500))((it) => {
    it.effect("admits HEAD on a GET endpoint: forwarded as HEAD, 200 without a body, GET's headers", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("viewer", "read")
        const get = yield* send("/api/v1/referentiel/applications/CRM-01", { token })
        const head = yield* send("/api/v1/referentiel/applications/CRM-01", { token, method: "HEAD" })
        expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: "" })
        expect(referential.seen.at(-1)!.method).toBe("HEAD")
        expect(stableHeaders(head.headers)).toEqual(stableHeaders(get.headers))
        expect(head.headers.get("x-ratelimit-limit")).toBe("5")
      }))

    it.effect("answers HEAD on an endpoint without GET like any other unknown route: 404", () =>
      Effect.gen(function*() {
        const token = yield* issue("tenant-admin", "write")
        const head = yield* send("/api/v1/tenant/invitations/3f1c6f0e-8b5a-4f7e-9a51-2f4f8f3f0a11", { token, method: "HEAD" })
        expect({ status: head.status, text: head.text, type: head.headers.get("content-type") }).toEqual({ status: 404, text: "", type: "application/problem+json" })
      }))

    it.effect("serves no probe: /healthz and /readyz are 404 here (they are on the admin port)", () =>
      Effect.gen(function*() {
        for (const path of ["/readyz", "/healthz"]) {
          const answer = yield* send(path)
          expect({ path, status: answer.status, body: JSON.parse(answer.text).errorCode }).toEqual({ path, status: 404, body: "NOT_FOUND" })
        }
      }))

    it.effect("answers a slowloris with a 408 problem once the headers timeout has passed", () =>
      Effect.gen(function*() {
        const port = yield* tightGateway
        const slowloris = yield* Effect.promise(() => RawConnection.open(port))
        slowloris.send("GET /api/v1/referentiel/applications HTTP/1.1\r\nHost: gateway\r\n")
        void slowloris.trickle("X-Slow: 1\r\n", 50)
        const answer = yield* Effect.promise(() => slowloris.next())
        expect(problemOf(answer)).toEqual({ status: 408, contentType: "application/problem+json", errorCode: "REQUEST_TIMEOUT" })
        expect(answer.headers["connection"]).toBe("close")
        yield* Effect.promise(() => slowloris.closed)
      }))

    it.effect("answers a slow authenticated upload with the client's 408, not a 503 of the upstream waiting for it", () =>
      Effect.gen(function*() {
        const port = yield* tightGateway
        const token = yield* issue("tenant-admin", "write")
        const upload = yield* Effect.promise(() => RawConnection.open(port))
        upload.send(
          `POST /api/v1/tenant/invitations HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"email":"`
        )
        void upload.trickle("a", 50)
        const answer = yield* Effect.promise(() => upload.next())
        expect(problemOf(answer)).toEqual({ status: 408, contentType: "application/problem+json", errorCode: "REQUEST_TIMEOUT" })
        expect(JSON.parse(answer.body).instance).toBe("/api/v1/tenant/invitations")
      }))

    it.effect("answers what node cannot read as a request with problem+json: 431, 400", () =>
      Effect.gen(function*() {
        const port = yield* tightGateway
        const cases = [
          [`GET /api/v1/docs HTTP/1.1\r\nHost: gateway\r\nCookie: ${"c".repeat(20_000)}\r\n\r\n`, 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"],
          ["\x16\x03\x01\x02\x00 not http\r\n\r\n", 400, "INVALID_REQUEST"],
          ["GET /api/v1/docs HTTP/1.1\r\nConnection: close\r\n\r\n", 400, "INVALID_REQUEST"]
        ] as const
        for (const [bytes, status, errorCode] of cases) {
          const answer = yield* Effect.promise(() => exchange(port, bytes))
          expect(problemOf(answer)).toEqual({ status, contentType: "application/problem+json", errorCode })
        }
      }))

    it.effect("bounds the connections of one client address: past the bound, a 429 problem and the connection closed", () =>
      Effect.gen(function*() {
        const port = yield* tightGateway
        const held = yield* Effect.promise(() => Promise.all([RawConnection.open(port), RawConnection.open(port)]))
        for (const connection of held) {
          connection.send("GET /api/v1/errors HTTP/1.1\r\nHost: gateway\r\n\r\n")
          expect((yield* Effect.promise(() => connection.next())).status).toBe(200)
        }
        const answer = yield* Effect.promise(() => exchange(port, "GET /api/v1/errors HTTP/1.1\r\nHost: gateway\r\n\r\n"))
        expect(problemOf(answer)).toEqual({ status: 429, contentType: "application/problem+json", errorCode: "RATE_LIMITED" })
        yield* Effect.promise(() => Promise.all(held.map((connection) => connection.close())))
      }))
  })
})
