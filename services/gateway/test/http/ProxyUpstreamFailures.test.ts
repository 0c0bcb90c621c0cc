import { describe, expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import http from "node:http"
import { expectRateLimitHeaders, GatewayUrl, Harness, issue, problem, send, withGateway } from "../support/ProxyHarness.js"

describe("public proxy: an upstream that fails", () => {
  withGateway(Duration.millis(500))((it) => {
    it.effect("answers 503 with Retry-After when the upstream does not answer in time", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("viewer", "read")
        const answer = yield* send("/api/v1/referentiel/functions/posi", { token })
        expect(answer.status).toBe(503)
        expect(answer.headers.get("retry-after")).toBe("5")
        expect(JSON.parse(answer.text)).toEqual(
          problem(
            "UNAVAILABLE",
            "unavailable",
            "Service unavailable",
            503,
            "The referential service did not answer in time; retry shortly.",
            "/api/v1/referentiel/functions/posi"
          )
        )
        expectRateLimitHeaders(answer, 5)
        // The gateway gave up on the upstream call rather than leaving it to finish.
        yield* Effect.promise(async () => {
          while (!referential.abandoned.includes("/api/v1/referentiel/functions/posi")) await new Promise((r) => setTimeout(r, 10))
        })
      }))
    // Last: it closes the provisioning upstream for good.
    it.effect("answers 503 when the upstream is down", () =>
      Effect.gen(function*() {
        const { provisioning } = yield* Harness
        const token = yield* issue("tenant-admin", "read")
        expect((yield* send("/api/v1/tenant/invitations", { token })).status).toBe(200)
        yield* Effect.callback<void>((resume) => {
          provisioning.server.closeAllConnections()
          provisioning.server.close(() => resume(Effect.void))
        })
        const answer = yield* send("/api/v1/tenant/invitations", { token })
        expect(answer.status).toBe(503)
        expect(answer.headers.get("retry-after")).toBe("5")
        expect(JSON.parse(answer.text)).toEqual(
          problem(
            "UNAVAILABLE",
            "unavailable",
            "Service unavailable",
            503,
            "The provisioning service is unavailable; retry shortly.",
            "/api/v1/tenant/invitations"
          )
        )
        expectRateLimitHeaders(answer, 5)
      }))
  })
})

describe("public proxy: a client going away", () => {
  // The upstream timeout is far beyond the upstream's 2-second delay: only the client's abort can cut the call short.
  withGateway(Duration.seconds(25))((it) => {
    it.effect("cancels the upstream call when the client aborts before the answer", () =>
      Effect.gen(function*() {
        const { referential } = yield* Harness
        const token = yield* issue("viewer", "read")
        const base = new URL(yield* GatewayUrl)
        const path = "/api/v1/referentiel/functions/left"
        yield* Effect.callback<void>((resume) => {
          const req = http.request({ hostname: base.hostname, port: base.port, path, headers: { authorization: `Bearer ${token}` } })
          req.on("error", () => resume(Effect.void))
          req.end()
          const abortOnceSeen = setInterval(() => {
            if (referential.seen.some((seen) => seen.url === path)) {
              clearInterval(abortOnceSeen)
              req.destroy()
            }
          }, 5)
        })
        // Waits past the upstream's 2-second delay: an upstream call left running would have answered by then.
        const abandoned = yield* Effect.promise(async () => {
          const giveUpAt = Date.now() + 3_000
          while (!referential.abandoned.includes(path) && Date.now() < giveUpAt) await new Promise((r) => setTimeout(r, 10))
          return referential.abandoned.includes(path)
        })
        expect(abandoned).toBe(true)
        // The gateway keeps serving after the abort.
        expect((yield* send("/api/v1/referentiel/functions", { token })).status).toBe(200)
      }))
  })
})
