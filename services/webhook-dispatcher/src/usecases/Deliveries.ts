import { Conflict, type DeliveryStatus, NotFound, RecoverResult } from "@portfolio/domain"
import { IdGenerator } from "@portfolio/platform/ids"
import { Effect, Exit, Option } from "effect"
import { type DeliveryRecord, DeliveryRepository, type ReceivedEvent } from "../ports/DeliveryRepository.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { firstDeliveryOf } from "./AttemptDelivery.js"
import { DeliveryLanes } from "./DeliveryLanes.js"
import { subscriptionNotFound } from "./Subscriptions.js"
import { attemptView, deliveryView } from "./Views.js"

/**
 * An event heard on the broker: one delivery per enabled subscription of its tenant listening to
 * its kind and without a delivery of it yet, each handed to its lane to be attempted at once and
 * recorded once its first attempt ended (docs/product-rules.md#webhooks): the broker's
 * message is acknowledged only once every delivery of it is recorded, and given back otherwise.
 * A plain call, for the events' consumer: on its hot path a fiber and a span per event cost more
 * than the event's share of the statements that record it. `done` gets how many deliveries were
 * made once all are recorded, or the first failure.
 */
export const makeIngestNow = Effect.gen(function*() {
  const deliveries = yield* DeliveryRepository
  const lanes = yield* DeliveryLanes
  const ids = yield* IdGenerator
  return (event: ReceivedEvent, done: (result: Exit.Exit<number, unknown>) => void) =>
    deliveries.listeningNow(event, (exit) => {
      if (Exit.isFailure(exit)) return done(Exit.failCause(exit.cause))
      const targets = exit.value
      if (targets.length === 0) return done(Exit.succeed(0))
      let left = targets.length
      let failure: Exit.Exit<never, unknown> | undefined
      const recorded = (result: Exit.Exit<void, unknown>) => {
        if (Exit.isFailure(result) && failure === undefined) failure = Exit.failCause(result.cause)
        if (--left === 0) done(failure ?? Exit.succeed(targets.length))
      }
      for (const target of targets) lanes.submitFirst(firstDeliveryOf(event, target, ids.nextNow(), recorded))
    })
})

const subscriptionExists = (id: string) =>
  Effect.flatMap(SubscriptionRepository, (s) => s.find(id)).pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.fail(subscriptionNotFound(id)), onSome: Effect.succeed }))
  )

const deliveryNotFound = (id: string) => new NotFound({ detail: `Webhook delivery '${id}' does not exist.` })

export const listDeliveries = Effect.fn("listDeliveries")(function*(subscriptionId: string, status: DeliveryStatus | undefined, limit: number) {
  yield* subscriptionExists(subscriptionId)
  return (yield* (yield* DeliveryRepository).list(subscriptionId, status, limit)).map(deliveryView)
})

export const listAttempts = Effect.fn("listAttempts")(function*(deliveryId: string) {
  const deliveries = yield* DeliveryRepository
  if (Option.isNone(yield* deliveries.find(deliveryId))) return yield* deliveryNotFound(deliveryId)
  return (yield* deliveries.attempts(deliveryId)).map(attemptView)
})

const enabled = (subscriptionId: string) =>
  Effect.flatMap(subscriptionExists(subscriptionId), (subscription) =>
    subscription.state === "enabled"
      ? Effect.succeed(subscription)
      : Effect.fail(new Conflict({ detail: `Subscription '${subscriptionId}' is disabled: enable it first (portfolio webhook enable ${subscriptionId}).` })))

/** Sends a delivery again now, with a fresh retry schedule, whatever its state, unless an attempt of it is in flight. */
export const redeliver = Effect.fn("redeliver")(function*(deliveryId: string) {
  const deliveries = yield* DeliveryRepository
  const existing = yield* deliveries.find(deliveryId)
  if (Option.isNone(existing)) return yield* deliveryNotFound(deliveryId)
  yield* enabled(existing.value.subscriptionId)
  const outcome = yield* deliveries.redeliver(deliveryId)
  if (Option.isNone(outcome)) return yield* deliveryNotFound(deliveryId)
  if (outcome.value === "in-flight") {
    return yield* new Conflict({ detail: `An attempt of delivery '${deliveryId}' is in flight; redeliver it once it ends.` })
  }
  const delivery: DeliveryRecord = outcome.value
  ;(yield* DeliveryLanes).submit(delivery.id, delivery.subscriptionId)
  return deliveryView(delivery)
})

/** Sends again every failed delivery of an enabled subscription created since `since` (docs/product-rules.md#webhooks). */
export const recoverDeliveries = Effect.fn("recoverDeliveries")(function*(subscriptionId: string, since: Date) {
  yield* enabled(subscriptionId)
  const recovered = yield* (yield* DeliveryRepository).recover(subscriptionId, since)
  const lanes = yield* DeliveryLanes
  for (const delivery of recovered) lanes.submit(delivery.id, delivery.subscriptionId)
  return new RecoverResult({ redelivered: recovered.length })
})

/**
 * Submits the pending deliveries due for a while that nothing took: a wake-up lost by the broker,
 * an attempt whose process died (its lease ended), a first attempt dropped from memory.
 */
export const sweepOverdue = Effect.fn("sweepOverdue")(function*(graceMs: number) {
  const overdue = yield* (yield* DeliveryRepository).overdue(graceMs, 1_000)
  const lanes = yield* DeliveryLanes
  for (const delivery of overdue) lanes.submit(delivery.id, delivery.subscriptionId)
  return overdue.length
})
