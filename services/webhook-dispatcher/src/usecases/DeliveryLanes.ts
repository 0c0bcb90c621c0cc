import { Context, Effect, FiberSet, Layer } from "effect"
import { DispatcherSettings } from "../Config.js"
import { attemptDelivery, type LeasedDelivery } from "./AttemptDelivery.js"

/**
 * Deliveries in memory beyond which submissions are dropped: they stay pending in PostgreSQL and
 * the sweeper submits them again, so memory stays bounded whatever piles up.
 */
const MaxHeld = 50_000

interface Waiting {
  readonly deliveryId: string
  readonly leased: LeasedDelivery | undefined
}

interface Lane {
  readonly waiting: Array<Waiting>
  inFlight: number
}

export interface DeliveryLanesShape {
  /**
   * Hands a due delivery to be attempted, with its lease when this process recorded it; a delivery
   * already held here is not taken twice.
   */
  readonly submit: (deliveryId: string, subscriptionId: string, leased?: LeasedDelivery) => void
}

/**
 * Where attempts run in this process: one lane per subscription, each with at most
 * `concurrencyPerSubscription` POSTs in flight, under `concurrency` for all of them. A dead or
 * slow endpoint fills its own lane only, and another tenant's first attempts go past it
 * (docs/product-rules.md#webhooks).
 */
export class DeliveryLanes extends Context.Tag("@portfolio/webhook-dispatcher/DeliveryLanes")<DeliveryLanes, DeliveryLanesShape>() {}

type AttemptServices = Effect.Effect.Context<ReturnType<typeof attemptDelivery>>

export const DeliveryLanesLive = Layer.scoped(
  DeliveryLanes,
  Effect.gen(function*() {
    const { concurrency, concurrencyPerSubscription } = yield* DispatcherSettings
    const run = yield* FiberSet.makeRuntime<AttemptServices>()
    const slots = yield* Effect.makeSemaphore(concurrency)
    const lanes = new Map<string, Lane>()
    const held = new Set<string>()

    const pump = (subscriptionId: string, lane: Lane) => {
      while (lane.inFlight < concurrencyPerSubscription && lane.waiting.length > 0) {
        const { deliveryId, leased } = lane.waiting.shift()!
        lane.inFlight++
        run(slots.withPermits(1)(attemptDelivery(deliveryId, leased)).pipe(
          Effect.ensuring(Effect.sync(() => {
            lane.inFlight--
            held.delete(deliveryId)
            if (lane.inFlight === 0 && lane.waiting.length === 0) lanes.delete(subscriptionId)
            else pump(subscriptionId, lane)
          }))
        ))
      }
    }

    return DeliveryLanes.of({
      submit: (deliveryId, subscriptionId, leased) => {
        if (held.has(deliveryId) || held.size >= MaxHeld) return
        held.add(deliveryId)
        let lane = lanes.get(subscriptionId)
        if (lane === undefined) {
          lane = { waiting: [], inFlight: 0 }
          lanes.set(subscriptionId, lane)
        }
        lane.waiting.push({ deliveryId, leased })
        pump(subscriptionId, lane)
      }
    })
  })
)
