import { expect, layer } from "@effect/vitest"
import { DeliveryAttempt, WebhookDelivery } from "@portfolio/domain"
import { DateTime, Effect, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { MemoryWorld } from "../support/Memory.js"
import { Acme, alice, bob, everyone, gina } from "../support/People.js"
import { consoleServer, csrfOf, signedIn } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)

/** A delivery of `subscriptionId` as the dispatcher would list it, with its attempts. */
const failedDelivery = (subscriptionId: string) =>
  Effect.gen(function*() {
    const at = yield* DateTime.now
    const delivery = WebhookDelivery.make({
      id: randomUUID(),
      subscriptionId,
      eventId: randomUUID(),
      eventType: "application.updated",
      status: "failed",
      failureReason: "attempts_exhausted",
      attempts: 1,
      nextAttemptAt: null,
      createdAt: at,
      updatedAt: at
    })
    const attempt = DeliveryAttempt.make({
      id: randomUUID(),
      deliveryId: delivery.id,
      attempt: 1,
      startedAt: at,
      durationMs: 42,
      statusCode: 500,
      error: null,
      responseBody: "<b>receiver exploded</b>"
    })
    yield* Effect.flatMap(MemoryWorld, (ref) => Ref.update(ref, (w) => ({ ...w, deliveries: [delivery, ...w.deliveries], deliveryAttempts: [...w.deliveryAttempts, attempt] })))
    return delivery
  })

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console webhook pages", (it) => {
  it.effect("an admin creates a subscription and sees its secret once, edits it, disables and enables it, rotates the secret; all recorded", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const form = yield* admin.get("/console/admin/webhooks/new")
      const refused = yield* admin.post("/console/admin/webhooks/new", { csrf: csrfOf(form), url: "not a url", description: "" })
      expect(refused.status).toBe(400)
      expect(refused.html).toContain("must be an absolute URL")
      const created = yield* admin.post("/console/admin/webhooks/new", { csrf: csrfOf(form), url: "https://hooks.acme.test/in", description: "CMDB sync", events: "application.created" })
      expect(created.status).toBe(200)
      expect(created.headers["cache-control"]).toBe("no-store")
      const subscription = (yield* world).subscriptions.at(-1)!
      expect(subscription).toMatchObject({ tenantId: Acme.tenantId, url: "https://hooks.acme.test/in", events: ["application.created"], allEvents: false })
      const secret = (yield* world).secrets.get(subscription.id)!
      expect(created.html).toContain(`value="${secret}"`)
      expect(created.html).toContain("This signing secret is shown once, now.")

      const list = yield* admin.get("/console/admin/webhooks")
      expect(list.html).toContain("https://hooks.acme.test/in")
      const page = yield* admin.get(`/console/admin/webhooks/${subscription.id}`)
      expect(page.html).not.toContain(secret)
      const edited = yield* admin.post(`/console/admin/webhooks/${subscription.id}`, {
        csrf: csrfOf(page),
        url: "https://hooks.acme.test/v2",
        description: "CMDB sync v2"
      })
      expect(edited.location).toBe(`/console/admin/webhooks/${subscription.id}?notice=saved`)
      expect((yield* world).subscriptions.at(-1)!.url).toBe("https://hooks.acme.test/v2")
      expect((yield* admin.post(`/console/admin/webhooks/${subscription.id}/disable`, { csrf: csrfOf(page) })).location).toContain("notice=disabled")
      expect((yield* world).subscriptions.at(-1)!.state).toBe("disabled")
      expect((yield* admin.get(`/console/admin/webhooks/${subscription.id}?notice=disabled`)).html).toContain("disabled")
      expect((yield* admin.post(`/console/admin/webhooks/${subscription.id}/enable`, { csrf: csrfOf(page) })).location).toContain("notice=enabled")
      const rotated = yield* admin.post(`/console/admin/webhooks/${subscription.id}/rotate-secret`, { csrf: csrfOf(page), graceHours: "2" })
      const newSecret = (yield* world).secrets.get(subscription.id)!
      expect(newSecret).not.toBe(secret)
      expect(rotated.html).toContain(`value="${newSecret}"`)
      expect(rotated.html).toContain("second signature made with the previous secret")
      const log = (yield* world).events.filter((e) => e.action.startsWith("webhook_")).map((e) => e.action)
      expect(log).toEqual(["webhook_created", "webhook_updated", "webhook_disabled", "webhook_enabled", "webhook_secret_rotated"])
    }))

  it.effect("shows a delivery's attempts escaped, and redelivers and recovers failed ones", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const form = yield* admin.get("/console/admin/webhooks/new")
      yield* admin.post("/console/admin/webhooks/new", { csrf: csrfOf(form), url: "https://hooks.acme.test/deliveries", description: "" })
      const subscription = (yield* world).subscriptions.at(-1)!
      const delivery = yield* failedDelivery(subscription.id)
      const page = yield* admin.get(`/console/admin/webhooks/${subscription.id}`)
      expect(page.html).toContain(`data-delivery="${delivery.id}"`)
      const attempts = yield* admin.get(`/console/admin/webhooks/${subscription.id}/deliveries/${delivery.id}`)
      expect(attempts.status).toBe(200)
      expect(attempts.html).toContain("&lt;b&gt;receiver exploded&lt;/b&gt;")
      expect(attempts.html).not.toContain("<b>receiver exploded</b>")
      const recovered = yield* admin.post(`/console/admin/webhooks/${subscription.id}/recover`, { csrf: csrfOf(page), since: "2026-01-01T00:00" })
      expect(recovered.html).toContain("1 failed delivery is queued to be attempted again.")
      const redelivered = yield* admin.post(`/console/admin/webhooks/${subscription.id}/deliveries/${delivery.id}/redeliver`, { csrf: csrfOf(page) })
      expect(redelivered.location).toContain("notice=redelivered")
      expect((yield* world).deliveries.find((d) => d.id === delivery.id)!.status).toBe("pending")
    }))

  it.effect("never lists, shows or changes another tenant's subscription, and keeps non-admins out", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const form = yield* admin.get("/console/admin/webhooks/new")
      yield* admin.post("/console/admin/webhooks/new", { csrf: csrfOf(form), url: "https://hooks.acme.test/private", description: "acme only" })
      const acme = (yield* world).subscriptions.at(-1)!
      const delivery = yield* failedDelivery(acme.id)

      const foreign = yield* signedIn("gina@globex.test", gina.password)
      const list = yield* foreign.get("/console/admin/webhooks")
      expect(list.html).not.toContain("hooks.acme.test")
      const csrf = csrfOf(list)
      const before = (yield* world).subscriptions.find((s) => s.id === acme.id)
      const attempts = [
        ["show", foreign.get(`/console/admin/webhooks/${acme.id}`)],
        ["edit", foreign.post(`/console/admin/webhooks/${acme.id}`, { csrf, url: "https://evil.test/", description: "" })],
        ["disable", foreign.post(`/console/admin/webhooks/${acme.id}/disable`, { csrf })],
        ["rotate", foreign.post(`/console/admin/webhooks/${acme.id}/rotate-secret`, { csrf, graceHours: "0" })],
        ["recover", foreign.post(`/console/admin/webhooks/${acme.id}/recover`, { csrf, since: "2026-01-01T00:00" })],
        ["attempts", foreign.get(`/console/admin/webhooks/${acme.id}/deliveries/${delivery.id}`)],
        ["redeliver", foreign.post(`/console/admin/webhooks/${acme.id}/deliveries/${delivery.id}/redeliver`, { csrf })]
      ] as const
      for (const [name, attempt] of attempts) {
        const page = yield* attempt
        expect(page.status, name).toBe(404)
        expect(page.html, name).not.toContain("hooks.acme.test")
      }
      expect((yield* world).subscriptions.find((s) => s.id === acme.id)).toEqual(before)
      const changing = (yield* world).dispatcherCalls.filter((c) => c.actor.email === "gina@globex.test" && c.op !== "get" && c.op !== "list")
      expect(changing).toEqual([])

      const member = yield* signedIn("bob@acme.test", bob.password)
      expect((yield* member.get("/console/admin/webhooks")).status).toBe(403)
      expect((yield* member.get(`/console/admin/webhooks/${acme.id}`)).status).toBe(403)
    }))
})
