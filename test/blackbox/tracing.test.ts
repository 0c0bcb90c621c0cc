import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { ClientKind, type CollectedSpan, ConsumerKind, OtlpCollector, ProducerKind, ServerKind } from "../support/otlpCollector.js"
import { useSystem } from "../support/useSystem.js"
import { WebhookReceiver } from "../support/webhookReceiver.js"

const collector = new OtlpCollector()
const spans = collector.spans
const raw = collector.raw

// Filled in before the system starts: hooks run in the order they are registered.
const env: Record<string, string> = { OTEL_BSP_SCHEDULE_DELAY: "100", RATE_LIMIT_PER_MINUTE: "100000" }
beforeAll(async () => {
  env["OTEL_EXPORTER_OTLP_ENDPOINT"] = await collector.start()
})
afterAll(() => collector.stop())
const system = useSystem(env)

let tenant: CreatedTenant
let read: CreatedPat

beforeAll(async () => {
  tenant = await system.createTenant("bb-tracing")
  read = await system.createPat(tenant, "read")
  await system.putApplication(tenant, { code: "APP-TRACE", name: "Traced", status: "ACTIVE" })
}, 240_000)

const hex = (bytes: number) => randomBytes(bytes).toString("hex")

const traceOf = (traceId: string, done: (trace: ReadonlyArray<CollectedSpan>) => boolean) => collector.trace(traceId, done)

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

  it("names a SCIM call's spans by its route on the gateway and in provisioning, which serves it beside its HttpApi", async () => {
    const { token } = await system.adminOk("gateway", "POST", `/admin/tenants/${tenant.id}/scim-tokens`, { label: "tracing" })
    const traceId = hex(16)
    const reply = await system.api(token).get(`/scim/v2/Users/${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)}`, {
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` }
    })
    expect(reply.status, reply.text).toBe(404)
    const isProvisioning = (span: CollectedSpan) => span.service === "provisioning" && span.kind === ServerKind
    const trace = await traceOf(traceId, (trace) => trace.some(gatewayServerSpan) && trace.some(isProvisioning))
    expect(trace.find(gatewayServerSpan)!.name).toBe("GET /api/v1/scim/v2/Users/{id}")
    expect(trace.find(gatewayServerSpan)!.attributes["scim_token.prefix"]).toBe(token.slice(0, 11))
    expect(trace.find(isProvisioning)!.name).toBe("GET /api/v1/scim/v2/Users/{id}")
  })

  it("records the admission under the request's span for a busy token's calls too, decided in memory", async () => {
    // Back to back, the token's second and third calls are admitted from the gateway's memory (its
    // verification cached, its window's share held): their admission has its span all the same.
    const traceIds = [hex(16), hex(16), hex(16)]
    for (const traceId of traceIds) {
      const reply = await system.api(read.token).get("/referentiel/applications/APP-TRACE", { headers: { traceparent: `00-${traceId}-${hex(8)}-01` } })
      expect(reply.status, reply.text).toBe(200)
    }
    for (const traceId of traceIds) {
      const trace = await traceOf(traceId, (trace) => trace.some(gatewayServerSpan) && trace.some((span) => span.name === "gateway.admitRequest"))
      const admission = trace.find((span) => span.name === "gateway.admitRequest")!
      expect(admission.parentSpanId).toBe(trace.find(gatewayServerSpan)!.spanId)
      expect(admission.attributes).toMatchObject({ "http.route": "/api/v1/referentiel/applications/{code}" })
      expect(read.token.startsWith(admission.attributes["pat.prefix"] as string)).toBe(true)
    }
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

describe("tracing through events and webhooks", () => {
  it("keeps one trace from the admin write through the outbox and NATS to the webhook's POST", async () => {
    const receiver = await new WebhookReceiver().start()
    try {
      await system.adminOk("webhook-dispatcher", "POST", `/admin/tenants/${tenant.id}/webhooks`, { url: receiver.url("/traced") })
      const traceId = hex(16)
      const callerSpanId = hex(8)
      const put = await system.admin("referential", "PUT", `/admin/tenants/${tenant.id}/applications/APP-HOOKED`, {
        body: { name: "Hooked", status: "ACTIVE" },
        headers: { traceparent: `00-${traceId}-${callerSpanId}-01` }
      })
      expect(put.status, put.text).toBe(200)
      const [delivery] = await receiver.waitFor("/traced", 1)
      expect(delivery).toBeDefined()

      const isPost = (span: CollectedSpan) => span.service === "webhook-dispatcher" && span.kind === ClientKind && span.name === "POST"
      // The delivery's span ends after the POST's, once the attempt is recorded: it may come in a later export.
      const trace = await traceOf(traceId, (t) => t.some((post) => isPost(post) && t.some((s) => s.spanId === post.parentSpanId)))
      const server = trace.find((s) => s.service === "referential" && s.kind === ServerKind)!
      expect(server.parentSpanId).toBe(callerSpanId)
      const producer = trace.find((s) => s.service === "referential" && s.kind === ProducerKind)!
      expect(producer).toMatchObject({ name: "publish events.referential.application.created", attributes: expect.objectContaining({ "messaging.system": "nats" }) })
      const consumer = trace.find((s) => s.service === "webhook-dispatcher" && s.kind === ConsumerKind)!
      expect(consumer).toMatchObject({ name: "process events.referential.application.created", parentSpanId: producer.spanId })
      expect(consumer.links).toEqual([{ traceId, spanId: producer.spanId }])
      const post = trace.find(isPost)!
      expect(post.name).toBe("POST")
      expect(post.attributes).toMatchObject({ "http.request.method": "POST", "http.response.status_code": 200, "server.address": "127.0.0.1" })
      // The POST under the delivery's span, under the consumer: one chain from the write to the receiver.
      const deliver = trace.find((s) => s.spanId === post.parentSpanId)!
      expect(deliver.parentSpanId).toBe(consumer.spanId)
    } finally {
      await receiver.stop()
    }
  })
})

describe("a trace its caller does not sample", () => {
  it("is dropped by every service it crosses, over HTTP and through the outbox and NATS, and the lines still carry its id", async () => {
    const receiver = await new WebhookReceiver().start()
    try {
      await system.adminOk("webhook-dispatcher", "POST", `/admin/tenants/${tenant.id}/webhooks`, { url: receiver.url("/sampling") })
      const flagged = (traceId: string, flags: "00" | "01") => ({ traceparent: `00-${traceId}-${hex(8)}-${flags}` })
      const write = (code: string, traceId: string, flags: "00" | "01") =>
        system.admin("referential", "PUT", `/admin/tenants/${tenant.id}/applications/${code}`, { body: { name: code, status: "ACTIVE" }, headers: flagged(traceId, flags) })

      const droppedRead = hex(16)
      const droppedWrite = hex(16)
      const read1 = await system.api(read.token).get("/referentiel/applications/APP-TRACE", { headers: flagged(droppedRead, "00") })
      expect(read1.status, read1.text).toBe(200)
      const put1 = await write("APP-UNSAMPLED", droppedWrite, "00")
      expect(put1.status, put1.text).toBe(200)
      await receiver.waitFor("/sampling", 1)

      // The same calls sampled, made after: once theirs are exported whole, so would the first ones be.
      const keptRead = hex(16)
      const keptWrite = hex(16)
      const read2 = await system.api(read.token).get("/referentiel/applications/APP-TRACE", { headers: flagged(keptRead, "01") })
      expect(read2.status, read2.text).toBe(200)
      const put2 = await write("APP-SAMPLED", keptWrite, "01")
      expect(put2.status, put2.text).toBe(200)
      await receiver.waitFor("/sampling", 2)
      await traceOf(keptRead, (trace) => trace.some(gatewayServerSpan) && trace.some((span) => span.service === "referential" && span.kind === ServerKind))
      const isPost = (span: CollectedSpan) => span.service === "webhook-dispatcher" && span.kind === ClientKind && span.name === "POST"
      await traceOf(keptWrite, (trace) => trace.some((post) => isPost(post) && trace.some((span) => span.spanId === post.parentSpanId)))

      expect(spans.filter((span) => span.traceId === droppedRead || span.traceId === droppedWrite)).toEqual([])
      for (const traceId of [droppedRead, droppedWrite]) {
        expect(system.logs.some((line) => line.startsWith("referential | ") && line.includes(`"traceId":"${traceId}"`)), traceId).toBe(true)
      }
    } finally {
      await receiver.stop()
    }
  })
})
