import { Conflict, type DeliveryStatus, NotFound, RecoverResult } from "@portfolio/domain"
import { IdGenerator } from "@portfolio/platform/ids"
import { Deferred, Effect, Exit, Option } from "effect"
import { type DeliveryRecord, DeliveryRepository, type ReceivedEvent } from "../ports/DeliveryRepository.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { type FirstDelivery, firstDeliveryOf } from "./AttemptDelivery.js"
import { DeliveryLanes } from "./DeliveryLanes.js"
import { subscriptionNotFound } from "./Subscriptions.js"
import { attemptView, deliveryView } from "./Views.js"

/**
 * An event heard on the broker: one delivery per enabled subscription of its tenant listening to
 * its kind and without a delivery of it yet, each handed to its lane to be attempted at once and
 * recorded once its first attempt ended (docs/product-rules.md#webhooks). Succeeds with how many
 * deliveries were made once every one is recorded, or fails with the first failure once each was
 * told: the broker's message is acknowledged only once every delivery of it is recorded, and given
 * back otherwise. No span of its own: the consumer's span is the event's.
 */
export const ingestEvent = (event: ReceivedEvent): Effect.Effect<number, unknown, DeliveryRepository | DeliveryLanes> =>
  Effect.flatMap(DeliveryRepository, (deliveries) =>
    Effect.flatMap(deliveries.listening(event), (targets) =>
      targets.length === 0 ? Effect.succeed(0) : Effect.flatMap(DeliveryLanes, (lanes) =>
        Effect.flatMap(IdGenerator, (ids) =>
          Effect.clockWith((clock) => {
            const now = clock.currentTimeMillisUnsafe()
            const firsts = targets.map((target) => firstDeliveryOf(event, target, ids.nextNow(), now))
            return Effect.andThen(Effect.forEach(firsts, lanes.submitFirst, { discard: true }), recordedAll(firsts))
          })))))

/** How many were recorded once every one of them was, or the first failure once each was told. */
const recordedAll = (firsts: ReadonlyArray<FirstDelivery>): Effect.Effect<number, unknown> =>
  Effect.flatMap(Effect.forEach(firsts, (first) => Effect.exit(Deferred.await(first.recorded))), (exits) => {
    const failure = exits.find(Exit.isFailure)
    return failure === undefined ? Effect.succeed(firsts.length) : Effect.failCause(failure.cause)
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
  yield* (yield* DeliveryLanes).submit(delivery.id, delivery.subscriptionId)
  return deliveryView(delivery)
})

/** Sends again every failed delivery of an enabled subscription created since `since` (docs/product-rules.md#webhooks). */
export const recoverDeliveries = Effect.fn("recoverDeliveries")(function*(subscriptionId: string, since: Date) {
  yield* enabled(subscriptionId)
  const recovered = yield* (yield* DeliveryRepository).recover(subscriptionId, since)
  const lanes = yield* DeliveryLanes
  for (const delivery of recovered) yield* lanes.submit(delivery.id, delivery.subscriptionId)
  return new RecoverResult({ redelivered: recovered.length })
})

/**
 * Submits the pending deliveries due for a while that nothing took: a wake-up lost by the broker,
 * an attempt whose process died (its lease ended), a first attempt dropped from memory.
 */
export const sweepOverdue = Effect.fn("sweepOverdue")(function*(graceMs: number) {
  const overdue = yield* (yield* DeliveryRepository).overdue(graceMs, 1_000)
  const lanes = yield* DeliveryLanes
  for (const delivery of overdue) yield* lanes.submit(delivery.id, delivery.subscriptionId)
  return overdue.length
})
