import { describe, expect } from "@effect/vitest"
import { jsonLogger, Metrics, MetricsLive, withTraceIds } from "@portfolio/platform/telemetry"
import { parsePrometheusText, samplesOf, sumOf } from "@portfolio/platform/testing"
import { Duration, Effect, Layer, Logger, References, Schedule } from "effect"
import { issue, issueScim, send, withGateway } from "../support/ProxyHarness.js"

/** The request lines the gateway wrote, as its JSON logger writes them. */
const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
const capture = withTraceIds(Logger.map(jsonLogger, (line) => void lines.push(JSON.parse(line))))
const recording = Layer.mergeAll(MetricsLive("gateway"), Logger.layer([capture]), Layer.succeed(References.MinimumLogLevel, "Info"))

const scraped = Effect.map(Effect.flatMap(Metrics, (metrics) => metrics.exposition), parsePrometheusText)

/** Each case calls from an address of its own (the harness trusts one proxy hop), so that the per-address limit is its own. */
const from = (address: string) => ({ "x-forwarded-for": address })

/** The line of the request answered with `requestId`, once its response has closed. */
const lineOf = (requestId: string) =>
  Effect.sync(() => lines.find((line) => line.message === "request" && line.annotations["request_id"] === requestId)).pipe(
    Effect.filterOrFail((line) => line !== undefined),
    Effect.retry(Schedule.spaced("20 millis")),
    Effect.timeout("5 seconds"),
    Effect.orDie
  )

const duration = "http_server_request_duration_seconds_count"
const applications = "/api/v1/referentiel/applications"

describe("public port: the record of every request", () => {
  withGateway(Duration.seconds(2), recording)((it) => {
    it.effect("counts the proxied calls and the gateway's own answers by route template and status, and every rate-limit decision", () =>
      Effect.gen(function*() {
        const token = yield* issue("viewer", "read")
        const headers = from("198.51.100.71")
        const before = yield* scraped
        const delta = (after: typeof before, name: string, labels: Record<string, string>) => sumOf(after, name, labels) - sumOf(before, name, labels)

        expect((yield* send(`${applications}?status=ACTIVE`, { token, headers })).status).toBe(200)
        expect((yield* send(applications, { headers })).status).toBe(401)
        expect((yield* send("/api/v1/referentiel/nothing-here", { token, headers })).status).toBe(404)
        expect((yield* send("/api/v1/referentiel/applications;x", { headers })).status).toBe(400)
        expect((yield* send("/api/v1/errors/no-such-slug", { headers })).status).toBe(404)
        expect((yield* send("/api/v1/openapi.json", { headers })).status).toBe(200)
        expect((yield* send("/elsewhere", { headers })).status).toBe(404)
        // The token's 5 calls a minute (the harness's limit), then two 429s.
        for (let i = 0; i < 5; i++) yield* send(applications, { token, headers })

        const after = yield* scraped.pipe(Effect.filterOrFail((f) => delta(f, duration, {}) === 12), Effect.retry(Schedule.spaced("20 millis")), Effect.orDie)
        const route = (template: string | undefined, status: number) =>
          delta(after, duration, { http_request_method: "GET", ...(template === undefined ? {} : { http_route: template }), http_response_status_code: String(status) })
        expect(route(applications, 200)).toBe(4)
        expect(route(applications, 401)).toBe(1)
        expect(route(applications, 429)).toBe(2)
        expect(route("/api/v1/errors/{slug}", 404)).toBe(1)
        expect(route("/api/v1/openapi.json", 200)).toBe(1)
        // What matched no route has no http_route at all: the path never becomes a label.
        const unmatched = (families: typeof before, status: string) =>
          samplesOf(families, duration, { http_response_status_code: status })
            .filter((sample) => sample.labels["http_route"] === undefined)
            .reduce((total, sample) => total + sample.value, 0)
        expect(unmatched(after, "404") - unmatched(before, "404")).toBe(2)
        expect(unmatched(after, "400") - unmatched(before, "400")).toBe(1)
        expect(JSON.stringify([...after.values()])).not.toContain("nothing-here")

        const decisions = (decision: string, kind: string) => delta(after, "portfolio_gateway_rate_limit_decisions_total", { decision, kind })
        expect(decisions("admitted", "token")).toBe(5)
        expect(decisions("refused", "token")).toBe(2)
        expect(decisions("admitted", "address")).toBe(5)
        // Series of what never happened are there at 0, so that rate() sees their first increase.
        for (const kind of ["token", "partner", "scim", "address"]) {
          for (const decision of ["admitted", "refused"]) expect(samplesOf(after, "portfolio_gateway_rate_limit_decisions_total", { decision, kind })).toHaveLength(1)
        }
        expect(sumOf(after, "portfolio_gateway_rate_limit_decisions_total", { decision: "refused", kind: "partner" })).toBe(0)
      }))

    it.effect("logs each call at Info with its route, status, tenant, token prefix, request id and trace, never the token", () =>
      Effect.gen(function*() {
        const token = yield* issue("tenant-admin", "read")
        const headers = from("198.51.100.72")
        const admitted = yield* send("/api/v1/referentiel/applications/CRM-01", { token, headers: { ...headers, "x-request-id": "req-admitted-1" } })
        expect(admitted.status).toBe(200)
        const line = yield* lineOf("req-admitted-1")
        expect(line.annotations).toEqual({
          method: "GET",
          route: "/api/v1/referentiel/applications/{code}",
          status: 200,
          duration_ms: expect.any(Number),
          tenant: "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f",
          token_prefix: token.slice(0, 10),
          request_id: "req-admitted-1",
          traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
          spanId: expect.stringMatching(/^[0-9a-f]{16}$/)
        })

        // The gateway's own 401, under the request id it generated and answered with.
        const refused = yield* send("/api/v1/referentiel/applications/CRM-01", { headers: { ...headers, authorization: `Bearer ${token}x` } })
        expect(refused.status).toBe(401)
        const refusedLine = yield* lineOf(refused.headers.get("x-request-id")!)
        expect(refusedLine.annotations).toMatchObject({ route: "/api/v1/referentiel/applications/{code}", status: 401 })
        expect(refusedLine.annotations["tenant"]).toBeUndefined()
        expect(refusedLine.annotations["token_prefix"]).toBeUndefined()

        // A documentation page, answered by the Effect app, carries its generated request id too.
        const page = yield* send("/api/v1/errors", { headers })
        expect((yield* lineOf(page.headers.get("x-request-id")!)).annotations).toMatchObject({ route: "/api/v1/errors", status: 200 })

        expect(JSON.stringify(lines)).not.toContain(token.slice(10))
      }))

    it.effect("counts a SCIM token's decisions under the kind scim, and logs its tenant and displayed prefix", () =>
      Effect.gen(function*() {
        const made = yield* issueScim()
        const before = yield* scraped
        // The harness's SCIM limit is 4: four admitted, then one refused.
        for (let i = 0; i < 4; i++) expect((yield* send("/api/v1/scim/v2/Users", { token: made.token })).status).toBe(200)
        const over = yield* send("/api/v1/scim/v2/Users", { token: made.token, headers: { "x-request-id": "req-scim-429" } })
        expect(over.status).toBe(429)
        const delta = (after: typeof before, decision: string) =>
          sumOf(after, "portfolio_gateway_rate_limit_decisions_total", { decision, kind: "scim" }) -
          sumOf(before, "portfolio_gateway_rate_limit_decisions_total", { decision, kind: "scim" })
        const after = yield* scraped.pipe(Effect.filterOrFail((f) => delta(f, "refused") === 1), Effect.retry(Schedule.spaced("20 millis")), Effect.orDie)
        expect(delta(after, "admitted")).toBe(4)
        const line = yield* lineOf("req-scim-429")
        expect(line.annotations).toMatchObject({ route: "/api/v1/scim/v2/Users", status: 429, tenant: made.tenantId, token_prefix: made.tokenPrefix })
        expect(made.tokenPrefix).toBe(made.token.slice(0, 11))
        expect(JSON.stringify(lines)).not.toContain(made.token.slice(11))
      }))
  })
})
