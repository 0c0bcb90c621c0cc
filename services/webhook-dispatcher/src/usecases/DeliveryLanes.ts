import { Clock, Context, Deferred, Effect, FiberSet, Layer, Option, Schedule } from "effect"
import { DispatcherSettings } from "../Config.js"
import { type AttemptServices, attemptDelivery, attemptFirst, dispatcherStopped, type FirstDelivery, type LeasedDelivery, recordFirst } from "./AttemptDelivery.js"

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

/**
 * Where attempts run in this process: one lane per subscription, each with at most
 * `concurrencyPerSubscription` POSTs in flight, under `concurrency` for all of them. A dead or
 * slow endpoint fills its own lane only, and another tenant's first attempts go past it
 * (docs/product-rules.md#webhooks): lanes waiting for a slot of the process take the freed slots in
 * turn, one attempt each. Each attempt is a fiber of the lanes' `FiberSet`, interrupted when the
 * dispatcher stops (its POST stopped, nothing of it recorded).
 */
export class DeliveryLanes extends Context.Service<DeliveryLanes>()("@portfolio/webhook-dispatcher/DeliveryLanes", {
  make: Effect.gen(function*() {
    const { concurrency, concurrencyPerSubscription } = yield* DispatcherSettings
    const clock = yield* Clock.Clock
    const run = yield* FiberSet.makeRuntime<AttemptServices>()
    const lanes = new Map<string, Lane>()
    const held = new Set<string>()
    /** Lanes with deliveries waiting while every slot of the process is taken, in the order they asked. */
    const queue: Array<Lane> = []
    let inFlight = 0
    let stopped = false
    // Runs before the attempts' fibers are interrupted (the FiberSet, made first, closes last).
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stopped = true
        for (const lane of lanes.values()) for (const first of lane.first.splice(0)) Deferred.doneUnsafe(first.recorded, dispatcherStopped)
      })
    )

    /** A first delivery that waited too long: recorded pending, leased, it waits on in its lane as a retry would. */
    const spill = (first: FirstDelivery) =>
      run(recordFirst(first, undefined).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.void,
          onSome: (claimed) => Effect.sync(() => submit(claimed.delivery.id, claimed.delivery.subscriptionId, { claimed, leasedAt: clock.currentTimeMillisUnsafe() }))
        })),
        // Its event was told, and is handled again.
        Effect.ignoreCause
      ))
    yield* Effect.sync(() => {
      const before = clock.currentTimeMillisUnsafe() - FirstDeliveryWaitMs
      for (const lane of lanes.values()) {
        while (lane.first.length > 0 && lane.first[0]!.since < before) spill(lane.first.shift()!)
        forget(lane)
      }
    }).pipe(Effect.repeat(Schedule.spaced(SpillCheckMs)), Effect.forkScoped)

    /** A slot freed: it goes to the lanes waiting for one, then to its own lane. */
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

    /**
     * An attempt in a fiber of its own, holding a slot of its lane and of the process until it
     * ends, or until its POST succeeded (`posted`: AttemptDelivery's `settle`).
     */
    const start = (lane: Lane, attempt: (posted: Effect.Effect<void>) => Effect.Effect<void, never, AttemptServices>, heldId?: string) => {
      lane.inFlight++
      inFlight++
      let slotFreed = false
      const free = () => {
        if (slotFreed) return
        slotFreed = true
        freed(lane)
      }
      run(attempt(Effect.sync(free)).pipe(Effect.ensuring(Effect.sync(() => {
        if (heldId !== undefined) held.delete(heldId)
        free()
      }))))
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
        if (first !== undefined) start(lane, (posted) => attemptFirst(first, posted))
        else {
          const { deliveryId, leased } = lane.waiting.shift()!
          start(lane, (posted) => attemptDelivery(deliveryId, leased, posted), deliveryId)
        }
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

    const submitFirst = (first: FirstDelivery) => {
      if (stopped) {
        Deferred.doneUnsafe(first.recorded, dispatcherStopped)
        return
      }
      const lane = laneOf(first.claimed.target.id)
      lane.first.push(first)
      pump(lane)
    }

    return {
      /**
       * Hands a due delivery to be attempted, with its lease when this process recorded it; a
       * delivery already held here is not taken twice.
       */
      submit: (deliveryId: string, subscriptionId: string, leased?: LeasedDelivery): Effect.Effect<void> =>
        Effect.sync(() => submit(deliveryId, subscriptionId, leased)),
      /**
       * Hands a delivery to be attempted before it is recorded (AttemptDelivery's FirstDelivery):
       * at once when its lane has room, else when it does, or recorded pending after
       * FirstDeliveryWaitMs. Its `recorded` is done once, whatever happens (a failure when the
       * dispatcher stops first).
       */
      submitFirst: (first: FirstDelivery): Effect.Effect<void> => Effect.sync(() => submitFirst(first))
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
