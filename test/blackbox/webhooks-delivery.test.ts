import { afterAll, beforeAll, expect, it } from "vitest"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"
import { expectedSignature, WebhookReceiver } from "../support/webhookReceiver.js"

const system = useSharedSystem()
const receiver = new WebhookReceiver()
let tenant: CreatedTenant
let other: CreatedTenant
let everything: { id: string; secret: string }
let dasOnly: { id: string; secret: string }

const subscribe = async (t: CreatedTenant, path: string, events?: ReadonlyArray<string>) =>
  system.adminOk("webhook-dispatcher", "POST", `/admin/tenants/${t.id}/webhooks`, {
    url: receiver.url(path),
    ...(events === undefined ? {} : { events })
  })

beforeAll(async () => {
  await receiver.start()
  tenant = await system.createTenant("hooks-delivery")
  other = await system.createTenant("hooks-other")
  everything = await subscribe(tenant, "/all")
  dasOnly = await subscribe(tenant, "/das", ["das.submitted"])
  await subscribe(other, "/other")
}, 120_000)

afterAll(() => receiver.stop())

it("creates a subscription listening to every kind, with a whsec_ secret shown once", async () => {
  expect(everything.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
  const shown = await system.adminOk("webhook-dispatcher", "GET", `/admin/webhooks/${everything.id}`)
  expect(shown).toMatchObject({ id: everything.id, state: "enabled", consecutiveFailures: 0, allEvents: true })
  expect(shown.events).toEqual(["application.created", "application.updated", "das.submitted"])
  expect(shown).not.toHaveProperty("secret")
})

it("delivers each event kind, signed, with every header, to the tenant's subscriptions only", async () => {
  const application = { code: "HOOK-1", name: "Hooked", criticality: "IMPORTANT" }
  await system.putApplication(tenant, application)
  await system.putApplication(tenant, { ...application, criticality: "MISSION_CRITICAL" })
  const das = await system.cliJson(["das", "submit", "--tenant", tenant.slug, "--application", "HOOK-1", "--title", "Target architecture"])
  const all = await receiver.waitFor("/all", 3)
  expect(all.map((d) => d.headers["x-service-event"]).sort()).toEqual(["application.created", "application.updated", "das.submitted"])
  for (const delivery of all) {
    const body = JSON.parse(delivery.body)
    expect(body).toMatchObject({ type: delivery.headers["x-service-event"], tenantId: tenant.id })
    expect(delivery.headers["content-type"]).toBe("application/json")
    expect(delivery.headers["user-agent"]).toMatch(/ArchitecturePortfolio/)
    expect(delivery.headers["x-service-event-id"]).toBe(body.id)
    expect(delivery.headers["webhook-id"]).toBe(body.id)
    expect(delivery.headers["x-service-delivery-id"]).toMatch(/^[0-9a-f-]{36}$/)
    const timestamp = delivery.headers["x-service-timestamp"] as string
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60)
    expect(delivery.headers["webhook-timestamp"]).toBe(timestamp)
    expect(delivery.headers["x-service-signature"]).toBe(expectedSignature(everything.secret, timestamp, delivery.body))
    expect(delivery.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
  }
  const submitted = all.find((d) => d.headers["x-service-event"] === "das.submitted")!
  expect(JSON.parse(submitted.body).data).toMatchObject({ id: das.id, status: "SUBMITTED", applicationCode: "HOOK-1" })
  const onlyDas = await receiver.waitFor("/das", 1)
  expect(onlyDas.map((d) => d.headers["x-service-event"])).toEqual(["das.submitted"])
  expect(onlyDas[0]!.headers["x-service-signature"]).toBe(expectedSignature(dasOnly.secret, onlyDas[0]!.headers["x-service-timestamp"] as string, onlyDas[0]!.body))
  // The other tenant's receiver: give its would-be deliveries the time the first ones took, twice over.
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  expect(receiver.at("/other")).toEqual([])
  expect(receiver.at("/das")).toHaveLength(1)
})

it("records each delivery and its attempts", async () => {
  const deliveries = await system.adminOk("webhook-dispatcher", "GET", `/admin/webhooks/${everything.id}/deliveries`)
  expect(deliveries).toHaveLength(3)
  for (const delivery of deliveries) {
    expect(delivery).toMatchObject({ subscriptionId: everything.id, status: "succeeded", attempts: 1, failureReason: null, nextAttemptAt: null })
    const attempts = await system.adminOk("webhook-dispatcher", "GET", `/admin/deliveries/${delivery.id}/attempts`)
    expect(attempts).toHaveLength(1)
    expect(attempts[0]).toMatchObject({ attempt: 1, statusCode: 200, error: null, responseBody: "ok" })
    const sent = receiver.at("/all").find((d) => d.headers["x-service-delivery-id"] === attempts[0].id)
    expect(sent?.headers["x-service-event-id"]).toBe(delivery.eventId)
  }
})

it("refuses a URL it may not reach and an unknown event kind, storing nothing", async () => {
  const bad = await system.admin("webhook-dispatcher", "POST", `/admin/tenants/${tenant.id}/webhooks`, { body: { url: "ftp://example.com/hook" } })
  expect(bad.status).toBe(400)
  expect(bad.contentType).toBe("application/problem+json")
  const kind = await system.admin("webhook-dispatcher", "POST", `/admin/tenants/${tenant.id}/webhooks`, { body: { url: receiver.url("/x"), events: ["flux.created"] } })
  expect(kind.status).toBe(400)
  const listed = await system.adminOk("webhook-dispatcher", "GET", `/admin/tenants/${tenant.id}/webhooks`)
  expect(listed).toHaveLength(2)
})
