import { type MetricFamily, parsePrometheusText, samplesOf, sumOf } from "@portfolio/platform/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { documentedMetrics } from "../support/documentedMetrics.js"
import { OtlpCollector } from "../support/otlpCollector.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"
import { WebhookReceiver } from "../support/webhookReceiver.js"

// Six calls a minute per token: a burst of eight gets two 429s. The metrics are exported over
// OTLP every second as well, to the fake collector started before the system.
const collector = new OtlpCollector()
const env: Record<string, string> = { RATE_LIMIT_PER_MINUTE: "6", OTEL_METRIC_EXPORT_INTERVAL: "1000" }
beforeAll(async () => {
  env["OTEL_EXPORTER_OTLP_ENDPOINT"] = await collector.start()
})
afterAll(() => collector.stop())
const system = useSystem(env)
const receiver = new WebhookReceiver()

const services = ["gateway", "referential", "provisioning", "webhook-dispatcher"] as const
type Service = (typeof services)[number]

const duration = "http_server_request_duration_seconds_count"
const applications = "/api/v1/referentiel/applications"
const application = "/api/v1/referentiel/applications/{code}"
const stats = "/api/v1/referentiel/functions/stats"

let tenant: CreatedTenant
let reader: CreatedPat
let burst: CreatedPat
/** The request id of each call of the known traffic, as the gateway answered it. */
const requestIds: Record<string, string> = {}

/** One scrape of a service's admin port: its answer, and the exposition read strictly (a malformed one throws). */
const scrape = async (service: Service) => {
  const reply = await send(`${system.system.adminUrls[service]}/metrics`)
  expect(reply.status).toBe(200)
  expect(reply.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return parsePrometheusText(reply.text)
}

/** Scrapes until `done` holds: a request is recorded when its response closes, an observable when it is first read. */
const scrapeUntil = async (service: Service, done: (families: Map<string, MetricFamily>) => boolean) => {
  let families = await scrape(service)
  for (let i = 0; i < 100 && !done(families); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    families = await scrape(service)
  }
  return families
}

/** The request lines a service wrote (docs/observability.md, "Request logs"). */
const requestLines = (service: Service) =>
  system.logs
    .filter((line) => line.startsWith(`${service} | {`))
    .map((line) => JSON.parse(line.slice(`${service} | `.length)) as { message: string; logLevel: string; annotations: Record<string, unknown> })
    .filter((line) => line.message === "request")

const lineWith = (service: Service, requestId: string) => requestLines(service).find((line) => line.annotations["request_id"] === requestId)

beforeAll(async () => {
  // One receiver takes the event, the other refuses it: its first attempt waits for a retry (a minute away).
  receiver.answer = (path) => ({ status: path === "/refusing" ? 500 : 200 })
  await receiver.start()
  tenant = await system.createTenant("bb-metrics")
  ;[reader, burst] = await Promise.all([system.createPat(tenant, "read"), system.createPat(tenant, "read")])
  for (const path of ["/metrics-hook", "/refusing"]) {
    await system.adminOk("webhook-dispatcher", "POST", `/admin/tenants/${tenant.id}/webhooks`, { url: receiver.url(path) })
  }
  await system.putApplication(tenant, { code: "APP-M1", name: "Measured", status: "ACTIVE" })
  expect(await receiver.waitFor("/metrics-hook", 1)).toHaveLength(1)
  expect(await receiver.waitFor("/refusing", 1)).toHaveLength(1)

  const api = system.api(reader.token)
  const known = {
    list: await api.get("/referentiel/applications"),
    found: await api.get("/referentiel/applications/APP-M1"),
    missing: await api.get("/referentiel/applications/NOPE-1"),
    unrouted: await api.get("/nowhere"),
    anonymous: await system.api().get("/referentiel/applications"),
    // A read token on a tenant-admin's write: the gateway's own 403.
    forbidden: await api.post("/tenant/invitations", { body: { email: "someone@bb-metrics.example", arbRole: "viewer" } })
  }
  expect(Object.values(known).map((reply) => reply.status)).toEqual([200, 200, 404, 404, 401, 403])
  const bursts = []
  for (let i = 0; i < 8; i++) bursts.push(await system.api(burst.token).get("/referentiel/functions/stats"))
  expect(bursts.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 200, 429, 429])
  for (const [name, reply] of [...Object.entries(known), ["limited", bursts[7]!] as const]) requestIds[name] = reply.headers.get("x-request-id")!
}, 240_000)

afterAll(() => receiver.stop())

describe("metrics at /metrics on every admin port", () => {
  it("counts the gateway's answers by route template and status, its own 401, 403, 404 and 429 included, and each rate-limit decision", async () => {
    const gateway = await scrapeUntil("gateway", (f) => sumOf(f, duration) >= 16)
    const count = (labels: Record<string, string>) => sumOf(gateway, duration, { http_request_method: "GET", ...labels })
    expect(count({ http_route: applications, http_response_status_code: "200" })).toBe(1)
    expect(count({ http_route: applications, http_response_status_code: "401" })).toBe(1)
    expect(count({ http_route: application, http_response_status_code: "200" })).toBe(1)
    expect(count({ http_route: application, http_response_status_code: "404" })).toBe(1)
    expect(count({ http_route: stats, http_response_status_code: "200" })).toBe(6)
    expect(count({ http_route: stats, http_response_status_code: "429" })).toBe(2)
    expect(sumOf(gateway, duration, { http_request_method: "POST", http_route: "/api/v1/tenant/invitations", http_response_status_code: "403" })).toBe(1)
    const unrouted = samplesOf(gateway, duration, { http_response_status_code: "404" }).filter((sample) => sample.labels["http_route"] === undefined)
    expect(unrouted.map((sample) => sample.value)).toEqual([1])
    // The admin port is recorded as well: the CLI created the two tokens there.
    expect(sumOf(gateway, duration, { http_request_method: "POST", http_route: "/admin/pats", http_response_status_code: "201" })).toBe(2)
    expect(sumOf(gateway, duration)).toBe(16)

    // Every series is a histogram with OpenTelemetry's buckets, 5 ms to 10 s.
    const les = samplesOf(gateway, "http_server_request_duration_seconds_bucket", { http_route: stats, http_response_status_code: "200" }).map((s) => s.labels["le"])
    expect(les).toEqual(["0.005", "0.01", "0.025", "0.05", "0.075", "0.1", "0.25", "0.5", "0.75", "1", "2.5", "5", "7.5", "10", "+Inf"])

    const decisions = (decision: string, kind: string) => sumOf(gateway, "portfolio_gateway_rate_limit_decisions_total", { decision, kind })
    // The forbidden call counted too: a token's calls are counted before what they may do is checked.
    expect(decisions("admitted", "token")).toBe(11)
    expect(decisions("refused", "token")).toBe(2)
    expect(decisions("admitted", "address")).toBe(1)
    expect(decisions("refused", "address")).toBe(0)
  })

  it("counts what reached the referential on its own ports, by the same route templates, and nothing the gateway refused", async () => {
    const referential = await scrapeUntil("referential", (f) => sumOf(f, duration, { http_route: stats }) >= 6)
    const count = (labels: Record<string, string>) => sumOf(referential, duration, { http_request_method: "GET", ...labels })
    expect(count({ http_route: applications, http_response_status_code: "200" })).toBe(1)
    expect(count({ http_route: application, http_response_status_code: "200" })).toBe(1)
    expect(count({ http_route: application, http_response_status_code: "404" })).toBe(1)
    expect(count({ http_route: stats, http_response_status_code: "200" })).toBe(6)
    expect(count({ http_response_status_code: "401" }) + count({ http_response_status_code: "429" })).toBe(0)
    // The admin port's own calls (the CLI's application PUT) are recorded there too.
    expect(sumOf(referential, duration, { http_request_method: "PUT", http_response_status_code: "200" })).toBeGreaterThanOrEqual(1)
    // The six statistics reads: one made, five answered from the read cache, within its default budget of 64 MB.
    expect(sumOf(referential, "portfolio_referential_read_cache_lookups_total", { result: "hit" })).toBeGreaterThanOrEqual(5)
    expect(sumOf(referential, "portfolio_referential_read_cache_lookups_total", { result: "miss" })).toBeGreaterThanOrEqual(1)
    expect(sumOf(referential, "portfolio_referential_read_cache_size_bytes", { share: "answers" })).toBeGreaterThan(0)
    expect(sumOf(referential, "portfolio_referential_read_cache_limit_bytes")).toBe(64 * 1024 * 1024)
  })

  it("reports every service's PostgreSQL pool under the database client conventions", async () => {
    for (const service of services) {
      const families = await scrapeUntil(service, (f) => samplesOf(f, "db_client_connection_count").length === 2)
      const pool = { db_client_connection_pool_name: service }
      expect(sumOf(families, "db_client_connection_max", pool), service).toBe(10)
      const [idle] = samplesOf(families, "db_client_connection_count", { ...pool, db_client_connection_state: "idle" })
      const [used] = samplesOf(families, "db_client_connection_count", { ...pool, db_client_connection_state: "used" })
      expect(idle!.value + used!.value, service).toBeGreaterThanOrEqual(1)
      expect(idle!.value + used!.value, service).toBeLessThanOrEqual(10)
      expect(samplesOf(families, "db_client_connection_pending_requests", pool), service).toHaveLength(1)
    }
  })

  it("reports the outbox backlog and the age of its oldest event where a service has an outbox", async () => {
    for (const service of ["referential", "provisioning", "webhook-dispatcher"] as const) {
      const families = await scrapeUntil(service, (f) => samplesOf(f, "portfolio_outbox_backlog").length === 1)
      expect(families.get("portfolio_outbox_backlog")?.type, service).toBe("gauge")
      expect(samplesOf(families, "portfolio_outbox_backlog")[0]!.value, service).toBeGreaterThanOrEqual(0)
      expect(samplesOf(families, "portfolio_outbox_oldest_age_seconds")[0]!.value, service).toBeGreaterThanOrEqual(0)
    }
    expect((await scrape("gateway")).has("portfolio_outbox_backlog")).toBe(false)
  })

  it("reports the pending messages of every durable consumer a service owns", async () => {
    const durables: Record<Exclude<Service, "referential">, ReadonlyArray<RegExp>> = {
      gateway: [/^gateway-member-removed-[0-9a-f]{16}$/],
      provisioning: [/^provisioning-subscription-disabled-[0-9a-f]{16}$/],
      "webhook-dispatcher": [/^webhook-dispatcher-events-[0-9a-f]{16}$/, /^webhook-dispatcher-wakeups-[0-9a-f]{16}$/]
    }
    for (const [service, names] of Object.entries(durables) as Array<[Exclude<Service, "referential">, ReadonlyArray<RegExp>]>) {
      const families = await scrapeUntil(service, (f) => samplesOf(f, "portfolio_jetstream_consumer_pending").length === names.length)
      for (const metric of ["portfolio_jetstream_consumer_pending", "portfolio_jetstream_consumer_ack_pending"]) {
        const consumers = samplesOf(families, metric).map((sample) => sample.labels["messaging_consumer_group_name"]!).sort()
        expect(consumers.length, `${service} ${metric}`).toBe(names.length)
        names.forEach((name, i) => expect(consumers[i], service).toMatch(name))
        for (const sample of samplesOf(families, metric)) expect(sample.value).toBeGreaterThanOrEqual(0)
      }
    }
    expect((await scrape("referential")).has("portfolio_jetstream_consumer_pending")).toBe(false)
  })

  it("counts webhook attempts by outcome and attempt number, with their duration and the delivery's delay", async () => {
    const dispatcher = await scrapeUntil("webhook-dispatcher", (f) => sumOf(f, "portfolio_webhook_delivery_attempts_total") >= 2)
    const attempts = samplesOf(dispatcher, "portfolio_webhook_delivery_attempts_total").map((s) => [s.labels["outcome"], s.labels["webhook_attempt"], s.value])
    expect(attempts.sort()).toEqual([["delivered", "1", 1], ["retrying", "1", 1]])
    expect(sumOf(dispatcher, "portfolio_webhook_delivery_duration_seconds_count", { outcome: "delivered" })).toBe(1)
    expect(sumOf(dispatcher, "portfolio_webhook_delivery_duration_seconds_count", { outcome: "retrying" })).toBe(1)
    // Only a delivered event has a delay to its delivery.
    expect(sumOf(dispatcher, "portfolio_webhook_delivery_lag_seconds_count")).toBe(1)
    expect(sumOf(dispatcher, "portfolio_webhook_delivery_lag_seconds_sum")).toBeLessThan(30)
  })

  it("reports every service's runtime: resident memory, CPU, heap spaces and the event loop", async () => {
    for (const service of services) {
      const families = await scrape(service)
      const rss = sumOf(families, "process_memory_usage_bytes")
      // A compiled service holds some 100 MB resident once ready (docs/architecture.md, "Memory").
      expect(rss, service).toBeGreaterThan(30 * 1024 * 1024)
      expect(rss, service).toBeLessThan(1024 * 1024 * 1024)
      expect(sumOf(families, "process_cpu_time_seconds_total", { cpu_mode: "user" }), service).toBeGreaterThan(0)
      const heap = sumOf(families, "v8js_memory_heap_used_bytes")
      expect(heap, service).toBeGreaterThan(5 * 1024 * 1024)
      expect(heap, service).toBeLessThan(rss)
      expect(sumOf(families, "v8js_memory_heap_used_bytes", { v8js_heap_space_name: "old_space" }), service).toBeGreaterThan(0)
      expect(sumOf(families, "nodejs_eventloop_time_seconds_total", { nodejs_eventloop_state: "active" }), service).toBeGreaterThan(0)
      const p99 = samplesOf(families, "nodejs_eventloop_delay_p99_seconds")
      expect(p99, service).toHaveLength(1)
      expect(p99[0]!.value, service).toBeGreaterThanOrEqual(0)
      expect(p99[0]!.value, service).toBeLessThan(10)
    }
  })

  it("names each service in target_info, and answers 404 to /metrics on every public port", async () => {
    for (const service of services) {
      expect(samplesOf(await scrape(service), "target_info")[0]!.labels["service_name"]).toBe(service)
    }
    for (const url of [system.system.gatewayUrl, system.system.serviceUrls.referential, system.system.serviceUrls.provisioning]) {
      const reply = await send(`${url}/metrics`)
      expect(reply.status, url).toBe(404)
      expect(reply.text).not.toContain("http_server_request_duration")
    }
  })

  it("names the magic-link page by its route template, never by the token in its path", async () => {
    const token = `metrics-${Date.now()}-unknown-token`
    const reply = await send(`${system.system.serviceUrls.provisioning}/accept/${token}`)
    const provisioning = await scrapeUntil("provisioning", (f) => sumOf(f, duration, { http_route: "/accept/{token}" }) >= 1)
    expect(sumOf(provisioning, duration, { http_request_method: "GET", http_route: "/accept/{token}", http_response_status_code: String(reply.status) })).toBe(1)
    expect(JSON.stringify([...provisioning.values()])).not.toContain(token)
    expect(requestLines("provisioning").filter((line) => line.annotations["route"] === "/accept/{token}")).toHaveLength(1)
    expect(system.logs.join("\n")).not.toContain(token)
  })

  it("exposes exactly the metrics docs/observability.md documents, with their documented types", async () => {
    const documented = new Map(documentedMetrics().map((metric) => [metric.family, metric.type]))
    const seen = new Set<string>()
    for (const service of services) {
      for (const family of (await scrape(service)).values()) {
        if (family.name === "target_info") continue
        expect(documented.get(family.name), `${service}: ${family.name}`).toBe(family.type)
        seen.add(family.name)
      }
    }
    expect([...seen].sort()).toEqual([...documented.keys()].sort())
  })

  it("exports the same metrics over OTLP, under each service's name", async () => {
    for (let i = 0; i < 100; i++) {
      const exported = new Set(collector.metrics.map((metric) => `${metric.service} ${metric.name}`))
      if (services.every((service) => exported.has(`${service} http.server.request.duration`) && exported.has(`${service} db.client.connection.count`))) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`not every service exported its metrics: ${JSON.stringify([...new Set(collector.metrics.map((m) => `${m.service} ${m.name}`))])}`)
  })
})

describe("request logs", () => {
  it("writes one Info line per request with the documented fields, the gateway's and the referential's in one trace", async () => {
    const gateway = lineWith("gateway", requestIds["found"]!)
    expect(gateway).toMatchObject({ logLevel: "INFO" })
    expect(gateway!.annotations).toEqual({
      service: "gateway",
      method: "GET",
      route: application,
      status: 200,
      duration_ms: expect.any(Number),
      tenant: tenant.id,
      token_prefix: reader.token.slice(0, 10),
      request_id: requestIds["found"],
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/)
    })
    // The gateway passes its request id on: the referential's line for the same call says it, and the same trace.
    const referential = lineWith("referential", requestIds["found"]!)
    expect(referential!.annotations).toMatchObject({
      service: "referential",
      method: "GET",
      route: application,
      status: 200,
      tenant: tenant.id,
      traceId: gateway!.annotations["traceId"]
    })
    expect(referential!.annotations["token_prefix"]).toBeUndefined()
  })

  it("logs the gateway's own answers: the 401 without a caller, the 429 with the token's tenant and prefix, the 404 without a route", async () => {
    expect(lineWith("gateway", requestIds["anonymous"]!)!.annotations).toMatchObject({ route: applications, status: 401 })
    expect(lineWith("gateway", requestIds["anonymous"]!)!.annotations["tenant"]).toBeUndefined()
    expect(lineWith("gateway", requestIds["limited"]!)!.annotations).toMatchObject({ route: stats, status: 429, tenant: tenant.id, token_prefix: burst.token.slice(0, 10) })
    const unrouted = lineWith("gateway", requestIds["unrouted"]!)!.annotations
    expect(unrouted).toMatchObject({ method: "GET", status: 404 })
    expect(unrouted["route"]).toBeUndefined()
    // Nothing of the known traffic went unlogged, and no line carries a token's secret part or a raw path.
    expect(Object.values(requestIds).every((id) => lineWith("gateway", id) !== undefined)).toBe(true)
    const logged = system.logs.join("\n")
    for (const token of [reader.token, burst.token]) expect(logged).not.toContain(token.slice(10))
    expect(requestLines("gateway").some((line) => JSON.stringify(line).includes("NOPE-1") || JSON.stringify(line).includes("nowhere"))).toBe(false)
  })
})
