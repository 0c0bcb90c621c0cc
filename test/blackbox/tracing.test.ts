import { randomBytes } from "node:crypto"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

/** One span as OTLP/HTTP JSON carries it, with the resource's service name beside it. */
interface CollectedSpan {
  readonly service: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
}

const ServerKind = 2

/** A fake OTLP/HTTP collector: every service exports here, as JSON (the http exporter's default). */
const spans: Array<CollectedSpan> = []
const raw: Array<string> = []
const collector = http.createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8")
    raw.push(body)
    if (request.url === "/v1/traces" && /json/.test(request.headers["content-type"] ?? "")) {
      const payload = JSON.parse(body) as { resourceSpans: Array<any> }
      for (const resourceSpans of payload.resourceSpans) {
        const service = resourceSpans.resource.attributes.find((a: any) => a.key === "service.name")?.value.stringValue
        for (const scope of resourceSpans.scopeSpans) {
          for (const span of scope.spans) {
            spans.push({
              service,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              name: span.name,
              kind: span.kind,
              attributes: Object.fromEntries(span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]))
            })
          }
        }
      }
    }
    response.writeHead(200, { "content-type": "application/json" })
    response.end("{}")
  })
})

// Filled in before the system starts: hooks run in the order they are registered.
// Debug: the services' per-request access line is a Debug line.
const env: Record<string, string> = { OTEL_BSP_SCHEDULE_DELAY: "100", RATE_LIMIT_PER_MINUTE: "100000", LOG_LEVEL: "Debug" }
beforeAll(async () => {
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  env["OTEL_EXPORTER_OTLP_ENDPOINT"] = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())))
const system = useSystem(env)

let tenant: CreatedTenant
let read: CreatedPat

beforeAll(async () => {
  tenant = await system.createTenant("bb-tracing")
  read = await system.createPat(tenant, "read")
  await system.putApplication(tenant, { code: "APP-TRACE", name: "Traced", status: "ACTIVE" })
}, 240_000)

const hex = (bytes: number) => randomBytes(bytes).toString("hex")

/** Waits for the spans of a trace until `done` holds of them (the services export every 100 ms). */
const traceOf = async (traceId: string, done: (trace: ReadonlyArray<CollectedSpan>) => boolean) => {
  for (let i = 0; i < 100; i++) {
    const trace = spans.filter((span) => span.traceId === traceId)
    if (done(trace)) return trace
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`trace ${traceId} incomplete: ${JSON.stringify(spans.filter((span) => span.traceId === traceId), null, 1)}`)
}

const gatewayServerSpan = (span: CollectedSpan) => span.service === "gateway" && span.kind === ServerKind

describe("tracing through the gateway", () => {
  it("continues the client's trace: the gateway's server span, then the referential's under it", async () => {
    const traceId = hex(16)
    const clientSpanId = hex(8)
    const reply = await system.api(read.token).get("/referentiel/applications/APP-TRACE", {
      headers: { traceparent: `00-${traceId}-${clientSpanId}-01` }
    })
    expect(reply.status, reply.text).toBe(200)

    const trace = await traceOf(traceId, (trace) =>
      trace.some(gatewayServerSpan) && trace.some((span) => span.service === "referential" && span.kind === ServerKind))
    const gateway = trace.find(gatewayServerSpan)!
    expect(gateway.name).toBe("GET /api/v1/referentiel/applications/{code}")
    expect(gateway.parentSpanId).toBe(clientSpanId)
    expect(gateway.attributes).toMatchObject({
      "http.request.method": "GET",
      "http.route": "/api/v1/referentiel/applications/{code}",
      "url.path": "/api/v1/referentiel/applications/APP-TRACE",
      "tenant.id": tenant.id,
      "pat.prefix": read.token.slice(0, (gateway.attributes["pat.prefix"] as string).length)
    })
    expect(Number(gateway.attributes["http.response.status_code"])).toBe(200)
    expect(gateway.attributes["client.address"]).toBeTypeOf("string")

    const referential = trace.find((span) => span.service === "referential" && span.kind === ServerKind)!
    expect(referential.parentSpanId).toBe(gateway.spanId)
    expect(referential.name).toBe("GET /api/v1/referentiel/applications/{code}")

    // The admission decides inside the request's span.
    expect(trace.find((span) => span.name === "gateway.admitRequest")?.parentSpanId).toBe(gateway.spanId)

    // The referential's lines written for this request lead back to the trace.
    const lines = system.logs.filter((line) => line.startsWith("referential | ") && line.includes(traceId))
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(JSON.parse(line.slice("referential | ".length)).annotations.traceId).toBe(traceId)
  })

  it("gives a rejected request its own server span, named by its route, a trace root without a valid traceparent", async () => {
    const before = new Set(spans.map((span) => span.spanId))
    const reply = await system.api().get("/referentiel/applications/APP-TRACE", {
      // Upper-case hex is not a valid traceparent: the gateway starts the trace.
      headers: { traceparent: `00-${hex(16).toUpperCase()}-${hex(8)}-01` }
    })
    expect(reply.status).toBe(401)
    const fresh = async () => {
      for (let i = 0; i < 100; i++) {
        const found = spans.find((span) => !before.has(span.spanId) && gatewayServerSpan(span) && span.attributes["http.response.status_code"] !== undefined && Number(span.attributes["http.response.status_code"]) === 401)
        if (found !== undefined) return found
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error("no gateway span for the 401")
    }
    const span = await fresh()
    expect(span.name).toBe("GET /api/v1/referentiel/applications/{code}")
    expect(span.parentSpanId).toBe("")
    expect(span.attributes["tenant.id"]).toBeUndefined()
  })

  it("names an unknown path `unmatched`, whatever its path", async () => {
    const path = `/api/v1/nothing-here-${hex(4)}`
    const reply = await system.api(read.token).get(path.slice("/api/v1".length))
    expect(reply.status).toBe(404)
    const trace = await traceOf(
      (spans.find((span) => span.attributes["url.path"] === path) ?? { traceId: "" }).traceId || (await waitForPath(path)),
      (trace) => trace.some(gatewayServerSpan)
    )
    expect(trace.find(gatewayServerSpan)!.name).toBe("GET unmatched")
  })

  it("exports no attribute, span name or payload that contains a PAT", async () => {
    await traceOf(spans[0]!.traceId, () => spans.some((span) => span.service === "referential"))
    expect(raw.length).toBeGreaterThan(0)
    for (const body of raw) expect(body).not.toContain(read.token)
    // Nor the secret half alone: the part after the public prefix.
    const prefix = spans.find((span) => span.attributes["pat.prefix"] !== undefined)!.attributes["pat.prefix"] as string
    for (const body of raw) expect(body).not.toContain(read.token.slice(prefix.length))
  })
})

const waitForPath = async (path: string) => {
  for (let i = 0; i < 100; i++) {
    const found = spans.find((span) => span.attributes["url.path"] === path)
    if (found !== undefined) return found.traceId
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`no span for ${path}`)
}
