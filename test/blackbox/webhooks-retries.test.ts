import { afterAll, beforeAll, expect, it } from "vitest"
import type { CreatedTenant } from "../support/system.js"
import { eventually } from "../support/eventually.js"
import { useSystem } from "../support/useSystem.js"
import { expectedSignature, WebhookReceiver } from "../support/webhookReceiver.js"

// The product's schedule compressed: 1 s, 2 s... instead of 1 min, 5 min... (docs/product-rules.md#webhooks).
const system = useSystem({ WEBHOOK_RETRY_SCHEDULE: "1s,2s,3s,4s,5s,6s", WEBHOOK_SWEEP_INTERVAL: "30s" })
const receiver = new WebhookReceiver()
const failing = new Set(["/down", "/moved"])

beforeAll(async () => {
  await receiver.start()
  receiver.answer = (path) =>
    path === "/moved" ? { status: 302, headers: { location: receiver.url("/elsewhere") } } : failing.has(path) ? { status: 500, body: "down for maintenance" } : { status: 204 }
}, 120_000)

afterAll(() => receiver.stop())

const subscribe = (tenant: CreatedTenant, path: string): Promise<{ id: string; secret: string }> =>
  system.adminOk("webhook-dispatcher", "POST", `/admin/tenants/${tenant.id}/webhooks`, { url: receiver.url(path) })

const subscription = (id: string) => system.adminOk("webhook-dispatcher", "GET", `/admin/webhooks/${id}`)

let seq = 0
const change = (tenant: CreatedTenant) => system.putApplication(tenant, { code: `RETRY-${++seq}`, name: "Retried", criticality: "IMPORTANT" })

it("retries a failing delivery on the schedule: 7 POSTs at 1, 2, 3, 4, 5 and 6 s intervals, one event id, a delivery id each", async () => {
  const tenant = await system.createTenant("hooks-retry")
  const hook = await subscribe(tenant, "/down")
  await change(tenant)
  const posts = await receiver.waitFor("/down", 7, 40_000)
  expect(posts).toHaveLength(7)
  const gaps = posts.slice(1).map((post, i) => (post.at - posts[i]!.at) / 1000)
  // Never early; late by at most a second on top of a fifth: the whole suite shares 2 cores, and a
  // wake-up that waits for a busy dispatcher is late, not misscheduled (1, 1, 1... or doubling fail).
  gaps.forEach((gap, i) => {
    expect(gap).toBeGreaterThanOrEqual((i + 1) * 0.8)
    expect(gap).toBeLessThanOrEqual((i + 1) * 1.2 + 1)
  })
  expect(new Set(posts.map((p) => p.headers["x-service-event-id"])).size).toBe(1)
  expect(new Set(posts.map((p) => p.headers["x-service-delivery-id"])).size).toBe(7)
  for (const post of posts) expect(post.headers["x-service-signature"]).toBe(expectedSignature(hook.secret, post.headers["x-service-timestamp"] as string, post.body))
  // Nothing after the seventh.
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  expect(receiver.at("/down")).toHaveLength(7)
  const [delivery] = await system.adminOk("webhook-dispatcher", "GET", `/admin/webhooks/${hook.id}/deliveries?status=failed`)
  expect(delivery).toMatchObject({ status: "failed", failureReason: "attempts_exhausted", attempts: 7, nextAttemptAt: null })
  const attempts = await system.adminOk("webhook-dispatcher", "GET", `/admin/deliveries/${delivery.id}/attempts`)
  expect(attempts.map((a: any) => [a.attempt, a.statusCode, a.responseBody])).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => [n, 500, "down for maintenance"]))
  expect(attempts.map((a: any) => a.id)).toEqual(posts.map((p) => p.headers["x-service-delivery-id"]))
  expect((await subscription(hook.id)).consecutiveFailures).toBe(7)

  // Three more failures of a second event: disabled at the tenth, not at the ninth.
  await change(tenant)
  await receiver.waitFor("/down", 9, 20_000)
  // The ninth failure is recorded after its POST was answered; the tenth comes 2 s later.
  expect(await eventually(() => subscription(hook.id), (s) => s.consecutiveFailures >= 9)).toMatchObject({ state: "enabled", consecutiveFailures: 9 })
  await receiver.waitFor("/down", 10, 20_000)
  // The tenth failure and the disabling commit together: no read sees 10 failures, still enabled.
  expect(await eventually(() => subscription(hook.id), (s) => s.consecutiveFailures >= 10)).toMatchObject({
    state: "disabled",
    disabledReason: "consecutive_failures",
    consecutiveFailures: 10
  })
  await new Promise((resolve) => setTimeout(resolve, 5_000))
  expect(receiver.at("/down")).toHaveLength(10)
  const held = await system.adminOk("webhook-dispatcher", "GET", `/admin/webhooks/${hook.id}/deliveries?status=failed`)
  expect(held.map((d: any) => d.failureReason).sort()).toEqual(["attempts_exhausted", "subscription_disabled"])
  // The tenant's admin is told, once (npm start keeps mail for `portfolio mail list`).
  let mail: Array<any> = []
  for (let i = 0; i < 50 && mail.length === 0; i++) {
    mail = (await system.cliJson(["mail", "list", "--to", tenant.adminEmail])).filter((m: any) => /Webhook to 127\.0\.0\.1:\d+ disabled/.test(m.subject))
    if (mail.length === 0) await new Promise((resolve) => setTimeout(resolve, 200))
  }
  expect(mail).toHaveLength(1)
  expect(mail[0].subject).toContain("after 10 failed deliveries")
  expect(mail[0].text).toContain(`portfolio webhook enable ${hook.id}`)

  // Enabled again with the endpoint back: recovery sends both failed deliveries again.
  failing.delete("/down")
  const enabled = await system.adminOk("webhook-dispatcher", "POST", `/admin/webhooks/${hook.id}/enable`)
  expect(enabled).toMatchObject({ state: "enabled", disabledReason: null, consecutiveFailures: 0 })
  const since = new Date(Date.now() - 10 * 60_000).toISOString()
  expect(await system.adminOk("webhook-dispatcher", "POST", `/admin/webhooks/${hook.id}/recover`, { since })).toEqual({ redelivered: 2 })
  const recovered = (await receiver.waitFor("/down", 12)).slice(10)
  expect(new Set(recovered.map((p) => p.headers["x-service-event-id"])).size).toBe(2)
  // The receiver has the POSTs before the dispatcher records their answers (a busy machine: 300 ms was not enough).
  const succeeded = () => system.adminOk("webhook-dispatcher", "GET", `/admin/webhooks/${hook.id}/deliveries?status=succeeded`)
  expect(await eventually(succeeded, (deliveries) => deliveries.length >= 2)).toHaveLength(2)
}, 120_000)

it("counts a redirect as a failure and does not follow it", async () => {
  const tenant = await system.createTenant("hooks-redirect")
  const hook = await subscribe(tenant, "/moved")
  await change(tenant)
  await receiver.waitFor("/moved", 2, 10_000)
  expect(receiver.at("/elsewhere")).toEqual([])
  const [delivery] = await system.adminOk("webhook-dispatcher", "GET", `/admin/webhooks/${hook.id}/deliveries`)
  expect(delivery).toMatchObject({ status: "pending", failureReason: null })
  const attempts = await system.adminOk("webhook-dispatcher", "GET", `/admin/deliveries/${delivery.id}/attempts`)
  expect(attempts[0]).toMatchObject({ attempt: 1, statusCode: 302, error: "HTTP 302" })
  await system.adminOk("webhook-dispatcher", "DELETE", `/admin/webhooks/${hook.id}`)
})

it("signs with both secrets during a rotation's grace, with the new one alone after it; redelivers on demand", async () => {
  const tenant = await system.createTenant("hooks-rotate")
  const hook = await subscribe(tenant, "/rotated")
  // The grace outlasts the change below (a CLI call) with room; its end is waited for afterwards.
  const rotated = await system.adminOk("webhook-dispatcher", "POST", `/admin/webhooks/${hook.id}/rotate-secret`, { graceSeconds: 15 })
  const graceEnds = Date.parse(rotated.previousSecretExpiresAt)
  expect(rotated.secret).not.toBe(hook.secret)
  await change(tenant)
  const [during] = await receiver.waitFor("/rotated", 1)
  const timestamp = during!.headers["x-service-timestamp"] as string
  expect(during!.headers["x-service-signature"]).toBe(
    `${expectedSignature(rotated.secret, timestamp, during!.body)} ${expectedSignature(hook.secret, timestamp, during!.body)}`
  )
  expect((during!.headers["webhook-signature"] as string).split(" ")).toHaveLength(2)
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, graceEnds - Date.now() + 500)))
  const [delivery] = await system.adminOk("webhook-dispatcher", "GET", `/admin/webhooks/${hook.id}/deliveries`)
  const again = await system.admin("webhook-dispatcher", "POST", `/admin/deliveries/${delivery.id}/redeliver`)
  expect(again.status).toBe(202)
  const [, after] = await receiver.waitFor("/rotated", 2)
  expect(after!.headers["x-service-event-id"]).toBe(during!.headers["x-service-event-id"])
  expect(after!.headers["x-service-delivery-id"]).not.toBe(during!.headers["x-service-delivery-id"])
  expect(after!.headers["x-service-signature"]).toBe(expectedSignature(rotated.secret, after!.headers["x-service-timestamp"] as string, after!.body))
  expect((after!.headers["webhook-signature"] as string).split(" ")).toHaveLength(1)
})
