import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { CreateSubscriptionRequest } from "@portfolio/domain"
import { FreshPgLive } from "@portfolio/platform/testing"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { attemptErrorsWithoutAddresses, MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { PgAdaptersLive } from "../../src/adapters/postgres/PgAdapters.js"
import { SecretSealer } from "../../src/adapters/postgres/SealedSecrets.js"
import { DispatcherSettings } from "../../src/Config.js"
import { DeliveryRepository } from "../../src/ports/DeliveryRepository.js"
import { createSubscription } from "../../src/usecases/Subscriptions.js"

const Settings = Layer.succeed(DispatcherSettings, {
  retrySchedule: [60_000],
  disableAfterFailures: 10,
  timeoutMs: 10_000,
  allowPrivateTargets: true,
  concurrency: 8,
  concurrencyPerSubscription: 2,
  sweepIntervalMs: 10_000
})

const Adapters = PgAdaptersLive.pipe(
  Layer.provideMerge(Layer.mergeAll(SecretSealer.fixed("a".repeat(64)), Settings)),
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(FreshPgLive("it_hooks", 4))
)

/** One pending delivery of a fresh event to a fresh subscription, due `dueInMs` from the database's now. */
const pendingDelivery = (dueInMs: number) =>
  Effect.gen(function*() {
    const tenantId = randomUUID()
    const subscription = yield* createSubscription(tenantId, new CreateSubscriptionRequest({ url: "http://127.0.0.1:9/hook" }))
    const id = randomUUID()
    yield* (yield* DeliveryRepository).recordPending({
      id: randomUUID(),
      tenantId,
      type: "application.created",
      body: "{}",
      createdAt: new Date(Date.now() + 1_000),
      traceparent: null
    }, { subscriptionId: subscription.id, deliveryId: id }, 15_000)
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE webhook_dispatcher.deliveries SET next_attempt_at = now() + ${dueInMs} * interval '1 millisecond', lease_until = NULL
               WHERE id = ${id}`
    return id
  })

layer(Adapters, { timeout: 60_000 })("delivery claims on PostgreSQL", (it) => {
  it.effect("a retry whose time the database's clock has not quite reached is taken (clock skew between hosts)", () =>
    Effect.gen(function*() {
      const id = yield* pendingDelivery(150)
      const claimed = yield* (yield* DeliveryRepository).claim(id, 15_000)
      expect(Option.map(claimed, (c) => c.delivery.id)).toEqual(Option.some(id))
    }))

  it.effect("a delivery due later than the allowance is not taken, and a leased one is taken once", () =>
    Effect.gen(function*() {
      const deliveries = yield* DeliveryRepository
      const later = yield* pendingDelivery(5_000)
      expect(Option.isNone(yield* deliveries.claim(later, 15_000))).toBe(true)
      const due = yield* pendingDelivery(-1_000)
      const [first, second] = yield* Effect.all([deliveries.claim(due, 15_000), deliveries.claim(due, 15_000)], { concurrency: 2 })
      expect([Option.isSome(first!), Option.isSome(second!)].sort()).toEqual([false, true])
    }))

  it.effect("a recorded delivery is born leased: nobody else claims it, its holder takes it again with its lease, renewed", () =>
    Effect.gen(function*() {
      const deliveries = yield* DeliveryRepository
      const sql = yield* SqlClient.SqlClient
      const tenantId = randomUUID()
      const subscription = yield* createSubscription(tenantId, new CreateSubscriptionRequest({ url: "http://127.0.0.1:9/born" }))
      const eventId = randomUUID()
      const id = randomUUID()
      const event = { id: eventId, tenantId, type: "application.created" as const, body: "{\"born\":true}", createdAt: new Date(Date.now() + 1_000), traceparent: null }
      const born = Option.getOrThrow(yield* deliveries.recordPending(event, { subscriptionId: subscription.id, deliveryId: id }, 15_000))
      expect(born.delivery).toMatchObject({ id, eventId, subscriptionId: subscription.id, status: "pending", attempts: 0 })
      expect(born.roundAttempt).toBe(1)
      expect(born.body).toBe("{\"born\":true}")
      expect(born.target).toMatchObject({ id: subscription.id, url: "http://127.0.0.1:9/born", state: "enabled", secret: subscription.secret })
      expect(Option.isNone(yield* deliveries.claim(id, 15_000))).toBe(true)
      expect(Option.isNone(yield* deliveries.claim(id, 15_000, "2001-01-01 00:00:00+00"))).toBe(true)
      // The subscription changed meanwhile: the holder's new claim sees it as it stands now.
      yield* sql`UPDATE webhook_dispatcher.subscriptions SET url = 'http://127.0.0.1:9/moved' WHERE id = ${subscription.id}`
      const again = yield* deliveries.claim(id, 60_000, born.lease)
      expect(Option.map(again, (c) => c.target.url)).toEqual(Option.some("http://127.0.0.1:9/moved"))
      const [lease] = yield* sql<{ seconds: number }>`SELECT extract(epoch FROM lease_until - now())::float8 AS seconds FROM webhook_dispatcher.deliveries WHERE id = ${id}`
      expect(lease!.seconds).toBeGreaterThan(50)
      // The old lease is spent: holding it no longer takes the delivery.
      expect(Option.isNone(yield* deliveries.claim(id, 15_000, born.lease))).toBe(true)
      // A replayed event makes no second delivery, under whatever id.
      expect(yield* deliveries.recordPending({ ...event, body: "{}" }, { subscriptionId: subscription.id, deliveryId: randomUUID() }, 15_000)).toEqual(Option.none())
    }))

  it.effect("an event's first deliveries: who listens is read without writing, a success is written once with its event, and never twice", () =>
    Effect.gen(function*() {
      const deliveries = yield* DeliveryRepository
      const sql = yield* SqlClient.SqlClient
      const tenantId = randomUUID()
      const [all, created, other] = [
        yield* createSubscription(tenantId, new CreateSubscriptionRequest({ url: "http://127.0.0.1:9/all" })),
        yield* createSubscription(tenantId, new CreateSubscriptionRequest({ url: "http://127.0.0.1:9/created", events: ["application.created"] })),
        yield* createSubscription(tenantId, new CreateSubscriptionRequest({ url: "http://127.0.0.1:9/das", events: ["das.submitted"] }))
      ]
      yield* createSubscription(randomUUID(), new CreateSubscriptionRequest({ url: "http://127.0.0.1:9/elsewhere" }))
      const event = { id: randomUUID(), tenantId, type: "application.created" as const, body: "{\"first\":true}", createdAt: new Date(Date.now() + 1_000), traceparent: null }
      const listening = () => Effect.map(deliveries.listening(event), (targets) => targets.map((t) => t.id).sort())
      expect(yield* listening()).toEqual([all.id, created.id].sort())
      const count = (table: string) => sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`webhook_dispatcher.${table}`)} WHERE ${sql(table === "events" ? "id" : "event_id")} = ${event.id}`.pipe(Effect.map((rows) => rows[0]!.n))
      expect(yield* count("events")).toBe(0)

      const deliveryId = randomUUID()
      const attempt = { id: randomUUID(), deliveryId, attempt: 1, startedAt: new Date(), durationMs: 3, statusCode: 204, error: null, responseBody: "" }
      const record = (first: { readonly attempt: typeof attempt; readonly subscriptionId: string }) => deliveries.recordFirstSuccess({ event, ...first })
      yield* sql`UPDATE webhook_dispatcher.subscriptions SET consecutive_failures = 4 WHERE id = ${all.id}`
      expect(yield* record({ attempt, subscriptionId: all.id })).toBe(true)
      const [written] = yield* sql<{ status: string; attempts: number; body: string; failures: number }>`
        SELECT d.status, d.attempts, e.body, s.consecutive_failures AS failures
        FROM webhook_dispatcher.deliveries d JOIN webhook_dispatcher.events e ON e.id = d.event_id
          JOIN webhook_dispatcher.subscriptions s ON s.id = d.subscription_id WHERE d.id = ${deliveryId}`
      expect(written).toEqual({ status: "succeeded", attempts: 1, body: "{\"first\":true}", failures: 0 })
      expect((yield* deliveries.attempts(deliveryId)).map((a) => [a.id, a.statusCode])).toEqual([[attempt.id, 204]])
      // Delivered: the event given back after a crash goes to the other subscription only.
      expect(yield* listening()).toEqual([created.id])
      // A second success of the same delivery (under another id: the crashed process chose its own) writes nothing.
      const again = { ...attempt, id: randomUUID(), deliveryId: randomUUID() }
      expect(yield* record({ attempt: again, subscriptionId: all.id })).toBe(false)
      expect(yield* count("deliveries")).toBe(1)
      expect(yield* count("events")).toBe(1)

      // A failed or waiting first delivery is recorded pending, under the id its POST carried, for its subscription only.
      const pendingId = randomUUID()
      const pending = Option.getOrThrow(yield* deliveries.recordPending(event, { subscriptionId: created.id, deliveryId: pendingId }, 15_000))
      expect(pending.delivery).toMatchObject({ id: pendingId, subscriptionId: created.id, status: "pending", attempts: 0 })
      expect(yield* listening()).toEqual([])
      expect(yield* deliveries.recordPending(event, { subscriptionId: created.id, deliveryId: randomUUID() }, 15_000)).toEqual(Option.none())
      // Nor for a subscription that does not listen to the event's kind.
      expect(yield* deliveries.recordPending(event, { subscriptionId: other.id, deliveryId: randomUUID() }, 15_000)).toEqual(Option.none())
    }))

  it.effect("the errors attempts recorded with an address before are rewritten as they would be recorded now (migration 0002)", () =>
    Effect.gen(function*() {
      const deliveryId = yield* pendingDelivery(60_000)
      const sql = yield* SqlClient.SqlClient
      const before = [
        "refused target 10.0.0.1: private",
        "refused target ::ffff:a00:1: private",
        "refused target metadata.google.internal: metadata",
        "refused target: the scheme must be https",
        "error: connect EACCES 10.1.2.3:443",
        "error: EPROTO",
        "connection refused",
        "dns: ENOTFOUND",
        "HTTP 500",
        null
      ]
      for (const [i, error] of before.entries()) {
        yield* sql`INSERT INTO webhook_dispatcher.attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
                   VALUES (${randomUUID()}, ${deliveryId}, ${i + 1}, now(), 1, NULL, ${error}, '')`
      }
      yield* attemptErrorsWithoutAddresses
      const after = yield* sql<{ error: string | null }>`SELECT error FROM webhook_dispatcher.attempts WHERE delivery_id = ${deliveryId} ORDER BY attempt`
      expect(after.map((row) => row.error)).toEqual([
        "refused: the address is not public",
        "refused: the address is not public",
        "refused: the address is not public",
        "refused: the scheme must be https",
        "request failed",
        "error: EPROTO",
        "connection refused",
        "dns: ENOTFOUND",
        "HTTP 500",
        null
      ])
    }))
})
