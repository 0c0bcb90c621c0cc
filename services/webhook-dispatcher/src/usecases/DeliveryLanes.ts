import { Context, Effect, Exit, FiberSet, Layer, Option } from "effect"
import { DispatcherSettings } from "../Config.js"
import { DeliveryRepository } from "../ports/DeliveryRepository.js"
import { type AttemptServices, attemptDelivery, type FirstDelivery, type LeasedDelivery, makeAttemptNow, newDeliveryOf, recordingLeaseMs } from "./AttemptDelivery.js"

/**
 * Deliveries in memory beyond which submissions are dropped: they stay pending in PostgreSQL and
 * the sweeper submits them again, so memory stays bounded whatever piles up.
 */
const MaxHeld = 50_000

interface Waiting {
  readonly deliveryId: string
  readonly leased: LeasedDelivery | undefined
}

/**
 * How long a first delivery may wait in its lane before it is recorded pending (and its event's
 * message acknowledged) to wait there like a retry: a slow endpoint's events must not hold the
 * events' consumer, whose messages in hand are bounded, for longer than this.
 */
export const FirstDeliveryWaitMs = 1_000

/** How often the lanes look for first deliveries that waited too long. */
const SpillCheckMs = 100

interface Lane {
  readonly subscriptionId: string
  /** First deliveries not recorded yet, oldest first: taken before the others, their events' messages being held meanwhile. */
  readonly first: Array<FirstDelivery>
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
  /**
   * Hands a delivery to be attempted before it is recorded (AttemptDelivery's FirstDelivery): at
   * once when its lane has room, else when it does, or recorded pending after FirstDeliveryWaitMs.
   * Its `recorded` is called once, whatever happens (a failure when the dispatcher stops first).
   */
  readonly submitFirst: (first: FirstDelivery) => void
}

/**
 * Where attempts run in this process: one lane per subscription, each with at most
 * `concurrencyPerSubscription` POSTs in flight, under `concurrency` for all of them. A dead or
 * slow endpoint fills its own lane only, and another tenant's first attempts go past it
 * (docs/product-rules.md#webhooks): lanes waiting for a slot of the process take the freed slots in
 * turn, one attempt each.
 */
export class DeliveryLanes extends Context.Service<DeliveryLanes, DeliveryLanesShape>()("@portfolio/webhook-dispatcher/DeliveryLanes") {}

export const DeliveryLanesLive = Layer.effect(
  DeliveryLanes,
  Effect.gen(function*() {
    const { concurrency, concurrencyPerSubscription, timeoutMs } = yield* DispatcherSettings
    const run = yield* FiberSet.makeRuntime<AttemptServices>()
    const attemptNow = yield* makeAttemptNow
    const deliveries = yield* DeliveryRepository
    const leaseMs = recordingLeaseMs(timeoutMs)
    const lanes = new Map<string, Lane>()
    const held = new Set<string>()
    /** Lanes with deliveries waiting while every slot of the process is taken, in the order they asked. */
    const queue: Array<Lane> = []
    let inFlight = 0
    /** The POSTs made outside a fiber, stopped when the dispatcher stops (as the fibers are interrupted). */
    const stops = new Set<(error: string) => void>()
    let stopped = false
    const interrupted = Exit.die(new Error("the dispatcher stopped"))
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stopped = true
        clearInterval(spilling)
        for (const stop of stops) stop("interrupted")
        for (const lane of lanes.values()) for (const first of lane.first.splice(0)) first.recorded(interrupted)
      })
    )

    /** A first delivery that waited too long: recorded pending, leased, it waits on in its lane as a retry would. */
    const spill = (first: FirstDelivery) =>
      deliveries.recordPendingNow(first.event, newDeliveryOf(first), leaseMs, (exit) => {
        first.recorded(Exit.asVoid(exit))
        if (Exit.isSuccess(exit) && Option.isSome(exit.value)) {
          const claimed = exit.value.value
          submit(claimed.delivery.id, claimed.delivery.subscriptionId, { claimed, leasedAt: performance.now() })
        }
      })
    const spilling = setInterval(() => {
      const before = performance.now() - FirstDeliveryWaitMs
      for (const lane of lanes.values()) {
        while (lane.first.length > 0 && lane.first[0]!.since < before) spill(lane.first.shift()!)
        forget(lane)
      }
    }, SpillCheckMs)
    spilling.unref()

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

    const start = (lane: Lane, { deliveryId, leased }: Waiting, first?: FirstDelivery) => {
      lane.inFlight++
      inFlight++
      if (first !== undefined || (leased !== undefined && attemptNow.canAttempt(leased))) {
        const claimed = first?.claimed ?? leased!.claimed
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
        const stop = attemptNow.start(claimed, posted, (rest) => {
          settledAlready = true
          if (tracked) stops.delete(stop)
          // Stopped by the shutdown: nothing is recorded, as for an attempt's interrupted fiber
          // (its lease runs out and the sweeper of a running replica takes it again, or a first
          // delivery's event is handled again); an "interrupted" failure must not count against
          // the subscription.
          if (stopped) return first?.recorded(interrupted)
          const done = () => {
            held.delete(deliveryId)
            if (!slotFreed) freed(lane)
          }
          if (rest === undefined) return done()
          run(rest.pipe(Effect.ensuring(Effect.sync(done))))
        }, first)
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
      while (lane.inFlight < concurrencyPerSubscription && (lane.first.length > 0 || lane.waiting.length > 0)) {
        if (inFlight >= concurrency) {
          if (!lane.queued) {
            lane.queued = true
            queue.push(lane)
          }
          return
        }
        const first = lane.first.shift()
        if (first !== undefined) start(lane, { deliveryId: first.claimed.delivery.id, leased: undefined }, first)
        else start(lane, lane.waiting.shift()!)
      }
      forget(lane)
    }

    const forget = (lane: Lane) => {
      if (lane.inFlight === 0 && lane.first.length === 0 && lane.waiting.length === 0 && !lane.queued) lanes.delete(lane.subscriptionId)
    }

    const laneOf = (subscriptionId: string) => {
      let lane = lanes.get(subscriptionId)
      if (lane === undefined) {
        lane = { subscriptionId, first: [], waiting: [], inFlight: 0, queued: false }
        lanes.set(subscriptionId, lane)
      }
      return lane
    }

    const submit = (deliveryId: string, subscriptionId: string, leased?: LeasedDelivery) => {
      if (stopped || held.has(deliveryId) || held.size >= MaxHeld) return
      held.add(deliveryId)
      const lane = laneOf(subscriptionId)
      lane.waiting.push({ deliveryId, leased })
      pump(lane)
    }

    return DeliveryLanes.of({
      submit,
      submitFirst: (first) => {
        if (stopped) return first.recorded(interrupted)
        const lane = laneOf(first.claimed.target.id)
        lane.first.push(first)
        pump(lane)
      }
    })
  })
)
