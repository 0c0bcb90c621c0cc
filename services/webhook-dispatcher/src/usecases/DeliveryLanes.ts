import { Context, Effect, FiberSet, Layer } from "effect"
import { DispatcherSettings } from "../Config.js"
import { type AttemptServices, attemptDelivery, type LeasedDelivery, makeAttemptNow } from "./AttemptDelivery.js"

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
  readonly subscriptionId: string
  readonly waiting: Array<Waiting>
  inFlight: number
  /** In the queue of lanes waiting for a slot of the process. */
  queued: boolean
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
 * (docs/product-rules.md#webhooks): lanes waiting for a slot of the process take the freed slots in
 * turn, one attempt each.
 */
export class DeliveryLanes extends Context.Tag("@portfolio/webhook-dispatcher/DeliveryLanes")<DeliveryLanes, DeliveryLanesShape>() {}

export const DeliveryLanesLive = Layer.scoped(
  DeliveryLanes,
  Effect.gen(function*() {
    const { concurrency, concurrencyPerSubscription } = yield* DispatcherSettings
    const run = yield* FiberSet.makeRuntime<AttemptServices>()
    const attemptNow = yield* makeAttemptNow
    const lanes = new Map<string, Lane>()
    const held = new Set<string>()
    /** Lanes with deliveries waiting while every slot of the process is taken, in the order they asked. */
    const queue: Array<Lane> = []
    let inFlight = 0
    /** The POSTs made outside a fiber, stopped when the dispatcher stops (as the fibers are interrupted). */
    const stops = new Set<(error: string) => void>()
    let stopped = false
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stopped = true
        for (const stop of stops) stop("interrupted")
      })
    )

    /** A POST ended: its slots go to the lanes waiting for one, then to its own lane. */
    const freed = (lane: Lane) => {
      lane.inFlight--
      inFlight--
      if (stopped) return
      while (inFlight < concurrency && queue.length > 0) {
        const next = queue.shift()!
        next.queued = false
        pump(next)
      }
      pump(lane)
    }

    const finished = (lane: Lane, deliveryId: string) => {
      held.delete(deliveryId)
      freed(lane)
    }

    const start = (lane: Lane, { deliveryId, leased }: Waiting) => {
      lane.inFlight++
      inFlight++
      if (leased !== undefined && attemptNow.canAttempt(leased)) {
        let settledAlready = false
        let tracked = false
        let slotFreed = false
        // A success frees its slot once its POST ended, while it is recorded (in a batch, a few
        // milliseconds); a failure keeps it until settled, so that no more POSTs go to an endpoint
        // than the subscription allows while its failures are counted.
        const posted = () => {
          slotFreed = true
          freed(lane)
        }
        const stop = attemptNow.start(leased.claimed, posted, (rest) => {
          settledAlready = true
          if (tracked) stops.delete(stop)
          // Stopped by the shutdown: nothing is recorded, as for an attempt's interrupted fiber
          // (its lease runs out and the sweeper of a running replica takes it again); an
          // "interrupted" failure must not count against the subscription.
          if (stopped) return
          const done = () => {
            held.delete(deliveryId)
            if (!slotFreed) freed(lane)
          }
          if (rest === undefined) return done()
          run(rest.pipe(Effect.ensuring(Effect.sync(done))))
        })
        // A POST refused before any connection is settled before `start` answers.
        if (!settledAlready) {
          stops.add(stop)
          tracked = true
        }
        return
      }
      run(attemptDelivery(deliveryId, leased).pipe(Effect.ensuring(Effect.sync(() => finished(lane, deliveryId)))))
    }

    const pump = (lane: Lane) => {
      while (lane.inFlight < concurrencyPerSubscription && lane.waiting.length > 0) {
        if (inFlight >= concurrency) {
          if (!lane.queued) {
            lane.queued = true
            queue.push(lane)
          }
          return
        }
        start(lane, lane.waiting.shift()!)
      }
      if (lane.inFlight === 0 && lane.waiting.length === 0 && !lane.queued) lanes.delete(lane.subscriptionId)
    }

    return DeliveryLanes.of({
      submit: (deliveryId, subscriptionId, leased) => {
        if (stopped || held.has(deliveryId) || held.size >= MaxHeld) return
        held.add(deliveryId)
        let lane = lanes.get(subscriptionId)
        if (lane === undefined) {
          lane = { subscriptionId, waiting: [], inFlight: 0, queued: false }
          lanes.set(subscriptionId, lane)
        }
        lane.waiting.push({ deliveryId, leased })
        pump(lane)
      }
    })
  })
)
