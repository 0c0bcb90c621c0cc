import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { CreateSubscriptionRequest } from "@portfolio/domain"
import { FreshPgLive } from "@portfolio/platform/testing/FreshDatabase"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { DispatcherMigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { PostgresAdapters } from "../../src/adapters/postgres/PostgresAdapters.js"
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

const Adapters = PostgresAdapters.pipe(
  Layer.provideMerge(Layer.mergeAll(SecretSealer.fixed("a".repeat(64)), Settings)),
  Layer.provideMerge(DispatcherMigrationsLive),
  Layer.provideMerge(FreshPgLive("it_hooks", 4))
)

/** One pending delivery of a fresh event to a fresh subscription, due `dueInMs` from the database's now. */
const pendingDelivery = (dueInMs: number) =>
  Effect.gen(function*() {
    const tenantId = randomUUID()
    yield* createSubscription(tenantId, new CreateSubscriptionRequest({ url: "http://127.0.0.1:9/hook" }))
    const [delivery] = yield* (yield* DeliveryRepository).recordEvent({
      id: randomUUID(),
      tenantId,
      type: "application.created",
      body: "{}",
      createdAt: new Date(Date.now() + 1_000),
      traceparent: null
    })
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE webhook_dispatcher.deliveries SET next_attempt_at = now() + ${dueInMs} * interval '1 millisecond' WHERE id = ${delivery!.id}`
    return delivery!.id
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
})
