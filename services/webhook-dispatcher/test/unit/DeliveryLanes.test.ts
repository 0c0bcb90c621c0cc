import { UnitOfWork } from "@portfolio/platform/sql"
import { Clock, Deferred, Effect, Exit, Layer, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { newSigningSecret } from "../../src/domain/Signature.js"
import { DispatcherSettings, type DispatcherSettingsShape } from "../../src/Config.js"
import { type ClaimedDelivery, DeliveryRepository, type DeliveryRepositoryShape } from "../../src/ports/DeliveryRepository.js"
import { type SendOutcome, WebhookSender, type WebhookSenderShape } from "../../src/ports/WebhookSender.js"
import { RetryWakeups, type RetryWakeupsShape } from "../../src/ports/RetryWakeups.js"
import { type AttemptServices, firstDeliveryOf, type LeasedDelivery } from "../../src/usecases/AttemptDelivery.js"
import { DeliveryLanes, FirstDeliveryWaitMs } from "../../src/usecases/DeliveryLanes.js"

const settings: DispatcherSettingsShape = {
  retrySchedule: [60_000],
  disableAfterFailures: 10,
  timeoutMs: 10_000,
  allowPrivateTargets: true,
  concurrency: 3,
  concurrencyPerSubscription: 2,
  sweepIntervalMs: 60_000
}

const secret = newSigningSecret(new Uint8Array(32).fill(7))

/** A delivery as this process recorded it, born leased now. */
const leased = (id: string, subscriptionId: string): LeasedDelivery => {
  const claimed: ClaimedDelivery = {
    delivery: {
      id,
      subscriptionId,
      eventId: `event-${id}`,
      eventType: "application.created",
      status: "pending",
      failureReason: null,
      attempts: 0,
      nextAttemptAt: new Date(),
      createdAt: new Date(),
      updatedAt: new Date()
    },
    roundAttempt: 1,
    body: `{"id":"${id}"}`,
    traceparent: null,
    lease: "2026-11-23 00:00:00+00",
    target: { id: subscriptionId, tenantId: "tenant", url: `http://127.0.0.1:9/${subscriptionId}`, state: "enabled", secret, previousSecret: null, previousSecretExpiresAt: null }
  }
  return { claimed, leasedAt: Date.now() }
}

/**
 * The lanes over a sender whose POSTs stay in flight until the test answers them, and a repository
 * that records a success when the test says so: what is in flight and recorded can be read at each step.
 */
const harness = Effect.gen(function*() {
  const inFlight = new Map<string, { readonly resolve: (outcome: SendOutcome) => void; stopped: string | undefined }>()
  const started: Array<string> = []
  const recording = new Map<string, (result: Exit.Exit<void, unknown>) => void>()
  const sender: WebhookSenderShape = {
    send: (request) =>
      Effect.callback<SendOutcome>((resume) => {
        const id = JSON.parse(request.body).id as string
        started.push(id)
        const post = { resolve: (outcome: SendOutcome) => resume(Effect.succeed(outcome)), stopped: undefined as string | undefined }
        inFlight.set(id, post)
        // As undici's: an interrupted POST is stopped.
        return Effect.sync(() => {
          if (!inFlight.has(id)) return
          post.stopped = "interrupted"
          inFlight.delete(id)
        })
      })
  }
  const failuresSettled = yield* Deferred.make<void>()
  const completed: Array<string> = []
  const spilled: Array<string> = []
  /** A success being recorded: the test tells when its statement committed. */
  const recorded = <A>(deliveryId: string, value: A) =>
    Effect.callback<A>((resume) => void recording.set(deliveryId, (exit) => resume(Exit.map(exit, () => value) as Exit.Exit<A>)))
  const deliveries = {
    recordFirstSuccess: (first) => recorded(first.attempt.deliveryId, true),
    // A first delivery recorded pending after its wait: born leased, as the statement would answer it.
    recordPending: (_event, delivery) =>
      Effect.sync(() => {
        spilled.push(delivery.deliveryId)
        return Option.some(leased(delivery.deliveryId, delivery.subscriptionId).claimed)
      }),
    complete: (attempt, _resolution, _subscriptionId, succeeded) =>
      succeeded
        ? recorded(attempt.deliveryId, { consecutiveFailures: 0, state: "enabled" as const })
        : Effect.as(Effect.andThen(Effect.sync(() => completed.push(attempt.deliveryId)), Deferred.await(failuresSettled)), { consecutiveFailures: 1, state: "enabled" as const }),
    claim: () => Effect.succeed(Option.none())
  } as Partial<DeliveryRepositoryShape> as DeliveryRepositoryShape
  const wakeups: RetryWakeupsShape = { schedule: () => Effect.void }
  const scope = yield* Scope.make()
  const lanes = yield* Layer.buildWithScope(DeliveryLanes.layer, scope).pipe(
    Effect.provide(Layer.mergeAll(
      Layer.succeed(DispatcherSettings, settings),
      Layer.succeed(WebhookSender, sender),
      Layer.succeed(DeliveryRepository, deliveries),
      Layer.succeed(RetryWakeups, wakeups),
      Layer.succeed(UnitOfWork, { run: (work) => work })
    ) as Layer.Layer<AttemptServices | DispatcherSettings>),
    Effect.map((context) => context.mapUnsafe.get(DeliveryLanes.key) as typeof DeliveryLanes.Service)
  )
  const answer = (id: string, status = 204) => {
    const post = inFlight.get(id)
    if (post === undefined) throw new Error(`${id} is not in flight`)
    inFlight.delete(id)
    post.resolve({ _tag: "Answered", status, responseBody: "", durationMs: 1 })
  }
  return { lanes, started, inFlight, recording, answer, failuresSettled, completed, spilled, close: Scope.close(scope, Exit.void) }
})

/** A delivery of an event not recorded yet, and what it was told of its recording (nothing yet, or once). */
const first = (id: string, subscriptionId: string, millis = Date.now()) => {
  const target = leased(id, subscriptionId).claimed.target
  const event = { id: `event-${id}`, tenantId: "tenant", type: "application.created" as const, body: `{"id":"${id}"}`, createdAt: new Date(), traceparent: null }
  const delivery = firstDeliveryOf(event, target, id, millis)
  return {
    delivery,
    get told(): Array<Exit.Exit<void, unknown>> {
      return Deferred.isDoneUnsafe(delivery.recorded) ? [Effect.runSync(Effect.exit(Deferred.await(delivery.recorded)))] : []
    }
  }
}

describe("the delivery lanes", () => {
  it("keeps each subscription under its own limit and the process under its own, and hands freed slots to waiting lanes in turn", async () => {
    await Effect.runPromise(Effect.gen(function*() {
      const { answer, close, completed, inFlight, lanes, recording, started } = yield* harness
      for (const id of ["a1", "a2", "a3", "a4"]) yield* lanes.submit(id, "A", leased(id, "A"))
      yield* lanes.submit("b1", "B", leased("b1", "B"))
      yield* lanes.submit("c1", "C", leased("c1", "C"))
      // A takes its 2, B its 1: the process's 3 are taken, and C waits for one.
      expect(started).toEqual(["a1", "a2", "b1"])

      // A delivery already held is not taken twice.
      yield* lanes.submit("a1", "A", leased("a1", "A"))
      yield* lanes.submit("c1", "C", leased("c1", "C"))
      expect(started).toEqual(["a1", "a2", "b1"])

      // a1's POST ends: its slot goes to C, which waited, before A's third; A waits its turn.
      answer("a1")
      expect(started).toEqual(["a1", "a2", "b1", "c1"])
      // The success is being recorded: the slot was freed, the delivery is still held.
      expect([...recording.keys()]).toEqual(["a1"])
      yield* lanes.submit("a1", "A", leased("a1", "A"))
      expect(started).toHaveLength(4)

      answer("b1")
      expect(started).toEqual(["a1", "a2", "b1", "c1", "a3"])
      expect([...inFlight.keys()].sort()).toEqual(["a2", "a3", "c1"])

      // A is at its own limit (a2, a3): a slot of the process freed by C stays free.
      answer("c1")
      expect(started).toEqual(["a1", "a2", "b1", "c1", "a3"])
      answer("a2")
      expect(started).toEqual(["a1", "a2", "b1", "c1", "a3", "a4"])

      // Once recorded, a delivery may be submitted again (a redelivery), and waits for A's room.
      recording.get("a1")!(Exit.void)
      yield* lanes.submit("a1", "A", leased("a1", "A"))
      expect(started).toHaveLength(6)
      answer("a3")
      expect(started.at(-1)).toBe("a1")

      // Stopping the dispatcher stops the POSTs in flight, records nothing of them (the sweeper
      // takes them again once their lease ends), and takes nothing more.
      const stillInFlight = [...inFlight.values()]
      yield* close
      expect(stillInFlight.map((post) => post.stopped)).toEqual(stillInFlight.map(() => "interrupted"))
      yield* Effect.sleep("20 millis")
      expect(completed).toEqual([])
      yield* lanes.submit("d1", "D", leased("d1", "D"))
      expect(started.at(-1)).toBe("a1")
    }))
  })

  it("keeps a failed POST's slot until its failure is settled", async () => {
    await Effect.runPromise(Effect.gen(function*() {
      const { answer, close, failuresSettled, lanes, started } = yield* harness
      for (const id of ["a1", "a2", "a3"]) yield* lanes.submit(id, "A", leased(id, "A"))
      expect(started).toEqual(["a1", "a2"])
      // A 500 is settled by an effect (its attempt recorded, the failure counted, the retry
      // scheduled): while the repository has not answered, the slot stays taken.
      answer("a1", 500)
      yield* Effect.sleep("50 millis")
      expect(started).toEqual(["a1", "a2"])
      yield* Deferred.succeed(failuresSettled, undefined)
      yield* Effect.sleep("50 millis")
      expect(started).toEqual(["a1", "a2", "a3"])
      yield* close
    }))
  })

  it("attempts a delivery not recorded yet before the recorded ones waiting in its lane, and tells it once, when its success is recorded", async () => {
    await Effect.runPromise(Effect.gen(function*() {
      const { answer, close, lanes, recording, started } = yield* harness
      for (const id of ["a1", "a2", "a3"]) yield* lanes.submit(id, "A", leased(id, "A"))
      const f1 = first("f1", "A")
      yield* lanes.submitFirst(f1.delivery)
      expect(started).toEqual(["a1", "a2"])
      answer("a1")
      expect(started).toEqual(["a1", "a2", "f1"])
      answer("f1")
      expect(f1.told).toEqual([])
      recording.get("f1")!(Exit.void)
      expect(f1.told).toEqual([Exit.void])
      yield* close
      // Told once: the shutdown after its recording tells it nothing more.
      expect(f1.told).toHaveLength(1)
    }))
  })

  // On the test clock: on a loaded machine, a real half wait could end after the spill's check.
  it("records pending a delivery that waited in its lane too long, tells it, and attempts it as a recorded one", async () => {
    await Effect.runPromise(Effect.gen(function*() {
      const { answer, close, lanes, spilled, started } = yield* harness
      for (const id of ["a1", "a2"]) yield* lanes.submit(id, "A", leased(id, "A"))
      const f2 = first("f2", "A", yield* Clock.currentTimeMillis)
      yield* lanes.submitFirst(f2.delivery)
      yield* TestClock.adjust(`${FirstDeliveryWaitMs / 2} millis`)
      expect(spilled).toEqual([])
      yield* TestClock.adjust(`${FirstDeliveryWaitMs / 2 + 300} millis`)
      expect(spilled).toEqual(["f2"])
      expect(f2.told).toEqual([Exit.void])
      expect(started).toEqual(["a1", "a2"])
      answer("a1")
      expect(started).toEqual(["a1", "a2", "f2"])
      yield* close
    }).pipe(Effect.provide(TestClock.layer())))
  })

  it("tells a delivery not recorded yet that it was not when the dispatcher stops first", async () => {
    await Effect.runPromise(Effect.gen(function*() {
      const { close, inFlight, lanes } = yield* harness
      for (const id of ["a1", "a2"]) yield* lanes.submit(id, "A", leased(id, "A"))
      const [waiting, posting] = [first("f3", "A"), first("f4", "B")]
      yield* lanes.submitFirst(waiting.delivery)
      yield* lanes.submitFirst(posting.delivery)
      expect([...inFlight.keys()]).toEqual(["a1", "a2", "f4"])
      yield* close
      expect(waiting.told.map(Exit.isFailure)).toEqual([true])
      expect(posting.told.map(Exit.isFailure)).toEqual([true])
      const late = first("f5", "C")
      yield* lanes.submitFirst(late.delivery)
      expect(late.told.map(Exit.isFailure)).toEqual([true])
    }))
  })
})
