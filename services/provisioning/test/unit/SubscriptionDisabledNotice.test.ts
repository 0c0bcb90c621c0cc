import { describe, expect, it } from "@effect/vitest"
import { type ArbRole, Member, SubscriptionDisabled } from "@portfolio/domain"
import { DateTime, Effect, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { subscriptionDisabledMail } from "../../src/domain/SubscriptionDisabledMail.js"
import { MemberRepository } from "../../src/ports/MemberRepository.js"
import { notifySubscriptionDisabled } from "../../src/usecases/SubscriptionDisabledNotice.js"
import { tenantWithAdmin } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

const disabledAt = DateTime.makeUnsafe("2026-07-01T09:00:00.000Z")

const disabled = (tenantId: string, overrides: Partial<{ id: string; lastError: string; url: string }> = {}) =>
  SubscriptionDisabled.make({
    id: overrides.id ?? randomUUID(),
    type: "webhook.subscription.disabled",
    occurredAt: disabledAt,
    tenantId,
    subscriptionId: "6f1c2d3e-4b5a-4c6d-8e7f-901234567890",
    url: overrides.url ?? "https://hooks.acme.example/portfolio?channel=arch",
    consecutiveFailures: 10,
    lastError: overrides.lastError ?? "HTTP 503 from the receiver"
  })

const addMember = (tenantId: string, userSub: string, userEmail: string, arbRole: ArbRole) =>
  Effect.flatMap(MemberRepository, (members) =>
    members.insert({ tenantId, member: new Member({ userSub, userEmail, arbRole, source: "INVITATION", grantedAt: disabledAt }) }))

/** Acme with three tenant-admins (one of them removed), an architect, and Globex with its own admin. */
const tenants = Effect.gen(function*() {
  const { tenant } = yield* tenantWithAdmin("acme", "first-admin@acme.test")
  yield* addMember(tenant.id, "sub-second", "Second.Admin@acme.test", "tenant-admin")
  yield* addMember(tenant.id, "sub-architect", "architect@acme.test", "architect")
  yield* addMember(tenant.id, "sub-gone", "gone@acme.test", "tenant-admin")
  yield* Effect.flatMap(MemberRepository, (members) => members.remove(tenant.id, "sub-gone", disabledAt))
  yield* tenantWithAdmin("globex", "admin@globex.test")
  // The admins' welcome links, mailed with their tenants, are not this suite's subject.
  yield* Effect.flatMap(MemoryStore, (store) => Ref.update(store, (s) => ({ ...s, mail: [] })))
  return tenant
})

const mail = Effect.map(Effect.flatMap(MemoryStore, Ref.get), (state) => state.mail)
const recipients = Effect.map(mail, (sent) => sent.map((m) => m.to).sort())

describe("notifySubscriptionDisabled", () => {
  it.effect("mails each active tenant-admin of the tenant once, and nobody else", () =>
    Effect.gen(function*() {
      const acme = yield* tenants
      expect(yield* notifySubscriptionDisabled(disabled(acme.id))).toBe(2)
      expect(yield* recipients).toEqual(["Second.Admin@acme.test", "first-admin@acme.test"])
      const [first] = yield* mail
      expect(first!.subject).toBe("Webhook to hooks.acme.example disabled in acme after 10 failed deliveries")
      expect(first!.text).toContain("https://hooks.acme.example/portfolio?channel=arch")
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("mails nobody again when the event is delivered again, even to two replicas at once, and again for another event", () =>
    Effect.gen(function*() {
      const acme = yield* tenants
      const event = disabled(acme.id)
      const [one, other] = yield* Effect.all([notifySubscriptionDisabled(event), notifySubscriptionDisabled(event)], { concurrency: 2 })
      expect(one! + other!).toBe(2)
      expect(yield* notifySubscriptionDisabled(event)).toBe(0)
      expect((yield* mail).length).toBe(2)
      expect(yield* notifySubscriptionDisabled(disabled(acme.id))).toBe(2)
      expect((yield* mail).length).toBe(4)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("claims nobody while mail cannot be handed over, so that the redelivery mails everyone", () =>
    Effect.gen(function*() {
      const acme = yield* tenants
      const store = yield* MemoryStore
      const event = disabled(acme.id)
      yield* Ref.update(store, (s) => ({ ...s, mailerDown: true }))
      expect((yield* Effect.flip(notifySubscriptionDisabled(event)))._tag).toBe("Unavailable")
      expect((yield* Ref.get(store)).notifications).toEqual([])
      yield* Ref.update(store, (s) => ({ ...s, mailerDown: false }))
      expect(yield* notifySubscriptionDisabled(event)).toBe(2)
      expect(yield* recipients).toEqual(["Second.Admin@acme.test", "first-admin@acme.test"])
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("mails nobody for a tenant unknown here", () =>
    Effect.gen(function*() {
      yield* tenants
      expect(yield* notifySubscriptionDisabled(disabled(randomUUID()))).toBe(0)
      expect(yield* mail).toEqual([])
    }).pipe(Effect.provide(MemoryLayer())))
})

describe("subscriptionDisabledMail", () => {
  const input = {
    to: "admin@acme.test",
    tenantSlug: "acme",
    subscriptionId: "6f1c2d3e-4b5a-4c6d-8e7f-901234567890",
    url: "https://hooks.acme.example/in",
    consecutiveFailures: 10,
    lastError: "HTTP 500: <html><script>alert(1)</script></html>",
    disabledAt
  }

  it("says where it pointed, how many failures, the last error, and how to enable and recover", () => {
    const message = subscriptionDisabledMail(input)
    expect(message.to).toBe("admin@acme.test")
    for (const body of [message.text, message.html]) {
      expect(body).toContain("https://hooks.acme.example/in")
      expect(body).toContain("10 consecutive failed deliveries")
      expect(body).toContain("portfolio webhook enable 6f1c2d3e-4b5a-4c6d-8e7f-901234567890")
      expect(body).toContain("Wednesday, 1 July 2026 at 09:00 UTC")
      expect(body).toContain("which disabled it, was at 2026-07-01T09:00:00.000Z")
    }
    expect(message.text).toContain("portfolio webhook recover 6f1c2d3e-4b5a-4c6d-8e7f-901234567890 --since <time>")
    expect(message.html).toContain("portfolio webhook recover 6f1c2d3e-4b5a-4c6d-8e7f-901234567890 --since &lt;time&gt;")
    expect(message.text).toContain("Last error: HTTP 500: <html><script>alert(1)</script></html>")
    expect(message.html).toContain("HTTP 500: &lt;html&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/html&gt;")
    expect(message.html).not.toContain("<script>")
  })

  it("quotes a long error's beginning only, and never credentials of the URL", () => {
    const message = subscriptionDisabledMail({ ...input, lastError: `${"x".repeat(600)}\r\nBcc: someone`, url: "https://user:s3cret@hooks.acme.example/in" })
    expect(message.text).toContain(`Last error: ${"x".repeat(500)}…`)
    expect(message.text).not.toContain("s3cret")
    expect(message.html).not.toContain("s3cret")
    expect(message.subject).not.toMatch(/[\r\n]/)
  })
})
