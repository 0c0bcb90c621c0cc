import { SubscriptionDisabled } from "@portfolio/domain"
import { memoized } from "@portfolio/platform/cache"
import { HttpDurationBuckets } from "@portfolio/platform/http"
import { IdGenerator, newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { instrument, parentSpanOf } from "@portfolio/platform/telemetry"
import { Clock, DateTime, Effect, Exit, Option, type Tracer } from "effect"
import { isRefusal } from "../domain/AttemptErrors.js"
import { disablesAt, isSuccess, nextStep } from "../domain/DeliveryRules.js"
import { deliveryHeaders, signingKey } from "../domain/Signature.js"
import { type DeliveryTarget, signingSecrets } from "../domain/Subscription.js"
import { DispatcherSettings } from "../Config.js"
import { type AttemptRecord, type ClaimedDelivery, DeliveryRepository, type DeliveryResolution, type NewDelivery, type ReceivedEvent } from "../ports/DeliveryRepository.js"
import { DispatcherOutbox } from "../ports/DispatcherOutbox.js"
import { RetryWakeups } from "../ports/RetryWakeups.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { type SendOutcome, WebhookSender } from "../ports/WebhookSender.js"
import { startSpan } from "./HandMadeSpans.js"

/** Beyond the POST's own timeout, how long a crashed holder keeps a delivery from others. */
const LeaseMarginMs = 5_000

/**
 * A delivery recorded by this process, born leased to it, and when (performance.now()): it may
 * wait in its subscription's lane before its first attempt.
 */
export interface LeasedDelivery {
  readonly claimed: ClaimedDelivery
  readonly leasedAt: number
}

/**
 * How long a delivery is leased at its recording: two POST timeouts and the margin. For one POST
 * timeout after it the attempt goes with the lease and the subscription as recorded (staleness no
 * greater than that of a POST under way when its subscription changes); later, the lease is taken
 * again, renewed, with the subscription as it then stands.
 */
export const recordingLeaseMs = (timeoutMs: number) => 2 * timeoutMs + LeaseMarginMs

const resolutionOf = (succeeded: boolean, claimed: ClaimedDelivery, schedule: ReadonlyArray<number>, now: number): DeliveryResolution => {
  const step = nextStep(succeeded, claimed.roundAttempt, schedule)
  switch (step._tag) {
    case "Succeeded":
      return { _tag: "Succeeded" }
    case "RetryAfter":
      return { _tag: "RetryAt", at: new Date(now + step.delayMs) }
    case "Exhausted":
      return { _tag: "Failed", reason: "attempts_exhausted" }
  }
}

/** A POST's span names only the URL's origin: its path and query may carry a receiver's token. */
const postAttributes = memoized((url: string) => {
  const { hostname, protocol } = new URL(url)
  return { "http.request.method": "POST", "server.address": hostname, "url.scheme": protocol.slice(0, -1) }
})

/** A secret's HMAC key, decoded and checked once rather than at each POST. */
const keyOf = memoized(signingKey)

/** What an attempt left its delivery as: delivered, waiting for a retry, failed for good, or failed with its subscription now disabled. */
type AttemptOutcome = "delivered" | "retrying" | "failed" | "disabled"

/** First attempts take well under a second; retries follow the schedule's minutes to hours (63 h in all by default). */
const LagBuckets = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 72 * 3600]

/**
 * The metrics of the attempts: how many by outcome and by number in their round (1 for the
 * first POST, bounded by the retry schedule), how long each POST took, and, for a delivery that
 * succeeds in its first round, how long after the event was recorded it was delivered (the delay
 * a subscriber sees, retries included).
 */
const attemptMetrics = instrument((meter) => {
  const attempts = meter.createCounter("portfolio.webhook.delivery.attempts", {
    unit: "{attempt}",
    description: "Webhook POSTs, by what the attempt left its delivery as and the attempt's number in its round."
  })
  const duration = meter.createHistogram("portfolio.webhook.delivery.duration", {
    unit: "s",
    description: "How long a webhook POST took, until its answer, its timeout or its failure.",
    advice: { explicitBucketBoundaries: [...HttpDurationBuckets] }
  })
  const lag = meter.createHistogram("portfolio.webhook.delivery.lag", {
    unit: "s",
    description: "From the event's recording to its successful delivery, for deliveries that succeed in their first round.",
    advice: { explicitBucketBoundaries: LagBuckets }
  })
  return (claimed: ClaimedDelivery, outcome: AttemptOutcome, durationMs: number) => {
    attempts.add(1, { outcome, "webhook.attempt": claimed.roundAttempt })
    duration.record(durationMs / 1000, { outcome })
    const firstRound = claimed.delivery.attempts + 1 === claimed.roundAttempt
    if (outcome === "delivered" && firstRound) lag.record((Date.now() - claimed.delivery.createdAt.getTime()) / 1000)
  }
})

const describe = (outcome: SendOutcome) => (outcome._tag === "Answered" ? `HTTP ${outcome.status}` : outcome.error)

/** The POST in a client span (OpenTelemetry HTTP conventions). */
const post = (url: string, headers: Record<string, string>, body: string) =>
  Effect.gen(function*() {
    const sender = yield* WebhookSender
    const outcome = yield* sender.send({ url, headers, body })
    yield* Effect.annotateCurrentSpan(
      outcome._tag === "Answered" ? { "http.response.status_code": outcome.status } : { "error.type": outcome.error }
    )
    return outcome
  }).pipe(Effect.withSpan("POST", { kind: "client", attributes: postAttributes(url) }, { captureStackTrace: false }))

/**
 * At exactly the threshold of consecutive failures (counted with the attempt, so concurrent
 * attempts cross it once), the subscription is disabled, its waiting deliveries are kept as failed
 * for a later recovery, and its tenant's admins are told (an event in the outbox), all together.
 */
const disable = (target: DeliveryTarget, consecutiveFailures: number, lastError: string) =>
  Effect.gen(function*() {
    if (!(yield* (yield* SubscriptionRepository).disableForFailures(target.id))) return
    yield* (yield* DeliveryRepository).failPending(target.id, "subscription_disabled")
    yield* (yield* DispatcherOutbox).append([SubscriptionDisabled.make({
      id: yield* newId,
      type: "webhook.subscription.disabled",
      occurredAt: yield* DateTime.now,
      tenantId: target.tenantId,
      subscriptionId: target.id,
      url: target.url,
      consecutiveFailures,
      lastError
    })])
    yield* Effect.logWarning("webhook subscription disabled after consecutive failures", { subscriptionId: target.id, consecutiveFailures })
  }).pipe((work) => Effect.flatMap(UnitOfWork, (uow) => uow.run(work)))

/**
 * A POST without an answer, for the operator: the attempt records only the tenant's words
 * (`error`), the log has what is behind them (`detail`: the address refused and the name it was
 * resolved from, node's message naming the address that refused the connection...). A target the
 * address policy refused is a warning: a tenant pointed a subscription at a place it must not reach.
 * Never the URL, whose query may hold the receiver's own secret.
 */
const logFailure = (claimed: ClaimedDelivery, attemptId: string, outcome: SendOutcome & { readonly _tag: "Failed" }) => {
  const fields = {
    subscriptionId: claimed.target.id,
    deliveryId: claimed.delivery.id,
    attemptId,
    error: outcome.error,
    detail: outcome.detail ?? outcome.error
  }
  return isRefusal(outcome.error)
    ? Effect.logWarning("webhook target refused by the address policy", fields)
    : Effect.logInfo("webhook POST failed", fields)
}

/** The attempt as recorded: its own id (the POST's `X-Service-Delivery-Id`), what came of the POST. */
const attemptRecordOf = (attemptId: string, claimed: ClaimedDelivery, started: Date, outcome: SendOutcome, succeeded: boolean): AttemptRecord => ({
  id: attemptId,
  deliveryId: claimed.delivery.id,
  attempt: claimed.delivery.attempts + 1,
  startedAt: started,
  durationMs: Math.round(outcome.durationMs),
  statusCode: outcome._tag === "Answered" ? outcome.status : null,
  error: outcome._tag === "Failed" ? outcome.error : succeeded ? null : `HTTP ${outcome.status}`,
  responseBody: outcome._tag === "Answered" ? outcome.responseBody : ""
})

const isDelivered = (outcome: SendOutcome) => outcome._tag === "Answered" && isSuccess(outcome.status)

/** The POST of an attempt: its body signed with the subscription's secrets as they stand at `started`. */
const requestOf = (claimed: ClaimedDelivery, attemptId: string, started: Date) => {
  const target = claimed.target
  const keys = signingSecrets(target, started).map(keyOf).filter((key) => key !== undefined)
  const headers = deliveryHeaders({
    keys,
    eventId: claimed.delivery.eventId,
    eventType: claimed.delivery.eventType,
    deliveryId: attemptId,
    timestamp: Math.floor(started.getTime() / 1000),
    body: claimed.body
  })
  return { url: target.url, headers, body: claimed.body }
}

/**
 * What follows a POST: the attempt recorded with where its delivery goes next and its
 * subscription's count, then, on a failure, the subscription disabled at the threshold or the
 * retry's wake-up scheduled.
 */
const settle = (claimed: ClaimedDelivery, attemptId: string, started: Date, outcome: SendOutcome) =>
  Effect.gen(function*() {
    const target = claimed.target
    if (outcome._tag === "Failed") yield* logFailure(claimed, attemptId, outcome)
    const { disableAfterFailures, retrySchedule } = yield* DispatcherSettings
    const succeeded = isDelivered(outcome)
    const resolution = resolutionOf(succeeded, claimed, retrySchedule, Date.now())
    const counted = yield* (yield* DeliveryRepository).complete(attemptRecordOf(attemptId, claimed, started, outcome, succeeded), resolution, target.id, succeeded)
    const disabling = !succeeded && counted.state === "enabled" && disablesAt(counted.consecutiveFailures, disableAfterFailures)
    const recordAttempt = yield* attemptMetrics
    recordAttempt(claimed, succeeded ? "delivered" : disabling ? "disabled" : resolution._tag === "RetryAt" ? "retrying" : "failed", outcome.durationMs)
    if (disabling) yield* disable(target, counted.consecutiveFailures, describe(outcome))
    else if (resolution._tag === "RetryAt") yield* (yield* RetryWakeups).schedule(claimed.delivery.id, target.id, resolution.at)
  })

const deliverSpan = "webhook deliver"

const deliverAttributes = (claimed: ClaimedDelivery) => ({
  "webhook.delivery.id": claimed.delivery.id,
  "webhook.event.id": claimed.delivery.eventId,
  "webhook.attempt": claimed.delivery.attempts + 1
})

/** The event's trace: the span of its recording by the dispatcher, whose context the event row keeps. */
const eventSpanOf = (claimed: ClaimedDelivery): Option.Option<Tracer.ExternalSpan> =>
  Option.fromNullishOr(parentSpanOf(claimed.traceparent))

const attempt = (claimed: ClaimedDelivery) =>
  Effect.gen(function*() {
    const target = claimed.target
    if (target.state !== "enabled") {
      return yield* (yield* DeliveryRepository).release(claimed.delivery.id, { _tag: "Failed", reason: "subscription_disabled" })
    }
    const attemptId = yield* newId
    const started = new Date()
    const request = requestOf(claimed, attemptId, started)
    const outcome = yield* post(request.url, request.headers, request.body)
    yield* settle(claimed, attemptId, started, outcome)
  }).pipe(Effect.withSpan(deliverSpan, {
    attributes: deliverAttributes(claimed),
    ...Option.match(eventSpanOf(claimed), { onNone: () => ({}), onSome: (parent) => ({ parent }) })
  }, {
    // A stack trace per span is an Error per delivery: the hot path's spans go without.
    captureStackTrace: false
  }))

/**
 * A delivery whose first attempt is made before anything of it is recorded
 * (docs/product-rules.md#webhooks): `claimed` as its recording would make it, under an id chosen now, and
 * `recorded`, called once when the delivery is durably recorded (its first attempt's success, its
 * failure with the retry it leads to, or the delivery pending when it waited too long to be
 * made) or could not be: the broker's message is acknowledged only once each of its deliveries was.
 */
export interface FirstDelivery {
  readonly event: ReceivedEvent
  readonly claimed: ClaimedDelivery
  /** performance.now() when it was handed to its lane. */
  readonly since: number
  readonly recorded: (result: Exit.Exit<void, unknown>) => void
}

/** What recording a first delivery pending needs of it: its subscription, and the id its POSTs carry. */
export const newDeliveryOf = ({ claimed }: FirstDelivery): NewDelivery => ({ subscriptionId: claimed.target.id, deliveryId: claimed.delivery.id })

/** A first delivery of `event` to `target`, not recorded yet: its record as the recording would write it, now. */
export const firstDeliveryOf = (
  event: ReceivedEvent,
  target: DeliveryTarget,
  deliveryId: string,
  recorded: (result: Exit.Exit<void, unknown>) => void
): FirstDelivery => {
  const now = new Date()
  let told = false
  return {
    event,
    since: performance.now(),
    // Once, whoever tells first: a shutdown may come while a success is being told.
    recorded: (result) => {
      if (told) return
      told = true
      recorded(result)
    },
    claimed: {
      delivery: {
        id: deliveryId,
        subscriptionId: target.id,
        eventId: event.id,
        eventType: event.type,
        status: "pending",
        failureReason: null,
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now
      },
      roundAttempt: 1,
      body: event.body,
      traceparent: event.traceparent,
      target,
      lease: ""
    }
  }
}

/**
 * What follows a first attempt that failed: its delivery recorded, pending and leased to this
 * process (the broker's message may then be acknowledged), then settled as any failed attempt.
 * When nothing was recorded (its subscription was disabled or deleted meanwhile, or the delivery
 * was recorded already by an earlier handling of the event), the attempt is not recorded either.
 */
const settleFirst = (first: FirstDelivery, attemptId: string, started: Date, outcome: SendOutcome) =>
  Effect.gen(function*() {
    const { timeoutMs } = yield* DispatcherSettings
    const delivery = newDeliveryOf(first)
    const recorded = yield* (yield* DeliveryRepository).recordPending(first.event, delivery, recordingLeaseMs(timeoutMs)).pipe(
      Effect.onExit((exit) => Effect.sync(() => first.recorded(Exit.asVoid(exit))))
    )
    if (Option.isNone(recorded)) {
      return yield* Effect.logInfo("a failed first attempt is not recorded: its subscription changed, or its delivery was recorded already", delivery)
    }
    yield* settle(recorded.value, attemptId, started, outcome)
  })

/** The services an attempt needs, as `attemptDelivery` and what `makeAttemptNow` leaves to the runtime. */
export type AttemptServices = Effect.Services<ReturnType<typeof attemptDelivery>>

/**
 * An attempt made outside a fiber: for a delivery this process recorded, whose lease is fresh and
 * whose subscription is enabled, the common case of a first attempt, it makes the same POST with the
 * same spans (made by hand) as `attemptDelivery`, and records a success through the repository's
 * batch with no fiber either: on the dispatcher's hot path the fibers, their spans and the services'
 * lookups cost more than the POST. A failed POST, and a success that could not be recorded, are
 * handed back as an effect to run (`settle`, or the log of what went wrong), in the attempt's span.
 *
 * `start(claimed, posted, settled)` starts the POST and answers a function that stops it (at
 * shutdown). `posted` is called once a successful POST ended, before it is recorded: the
 * subscription has one POST fewer in flight. `settled` is called once, last, with the effect still
 * to run or `undefined`.
 */
export const makeAttemptNow = Effect.gen(function*() {
  const { timeoutMs } = yield* DispatcherSettings
  const sender = yield* WebhookSender
  const deliveries = yield* DeliveryRepository
  const ids = yield* IdGenerator
  const recordAttempt = yield* attemptMetrics
  const tracer = yield* Effect.tracer
  const clock = yield* Clock.Clock
  const canAttempt = (leased: LeasedDelivery) => leased.claimed.target.state === "enabled" && performance.now() - leased.leasedAt <= timeoutMs
  const start = (
    claimed: ClaimedDelivery,
    posted: () => void,
    settled: (rest: Effect.Effect<void, never, AttemptServices> | undefined) => void,
    first?: FirstDelivery
  ) => {
    const span = startSpan(tracer, clock, deliverSpan, eventSpanOf(claimed), "internal")
    const attributes = deliverAttributes(claimed)
    for (const key in attributes) span.attribute(key, attributes[key as keyof typeof attributes])
    const attemptId = ids.nextNow()
    const started = new Date()
    const request = requestOf(claimed, attemptId, started)
    const postSpan = startSpan(tracer, clock, "POST", Option.some(span), "client")
    const origin = postAttributes(request.url)
    for (const key in origin) postSpan.attribute(key, origin[key as keyof typeof origin])
    const end = (exit: Exit.Exit<unknown, unknown>) => span.end(clock.currentTimeNanosUnsafe(), exit)
    return sender.start(request, (outcome) => {
      if (outcome._tag === "Answered") postSpan.attribute("http.response.status_code", outcome.status)
      else postSpan.attribute("error.type", outcome.error)
      postSpan.end(clock.currentTimeNanosUnsafe(), Exit.void)
      if (!isDelivered(outcome)) {
        return settled((first === undefined ? settle(claimed, attemptId, started, outcome) : settleFirst(first, attemptId, started, outcome)).pipe(
          Effect.withParentSpan(span),
          Effect.onExit((exit) => Effect.sync(() => end(exit))),
          Effect.catchCause((cause) => Effect.logError("webhook delivery attempt failed; the sweeper will take it again", cause))
        ))
      }
      posted()
      const recorded = (exit: Exit.Exit<void, unknown>) => {
        end(exit)
        if (Exit.isSuccess(exit)) {
          recordAttempt(claimed, "delivered", outcome.durationMs)
          return settled(undefined)
        }
        const next = first === undefined ? "the sweeper will take it again" : "its event will be handled again"
        settled(Effect.logError(`webhook delivery attempt not recorded; ${next}`, exit.cause).pipe(Effect.withParentSpan(span)))
      }
      const attempt = attemptRecordOf(attemptId, claimed, started, outcome, true)
      if (first === undefined) return deliveries.completeSuccess(attempt, claimed.target.id, recorded)
      deliveries.recordFirstSuccessNow({ event: first.event, subscriptionId: claimed.target.id, attempt }, (exit) => {
        first.recorded(Exit.asVoid(exit))
        if (Exit.isSuccess(exit) && !exit.value) {
          // Delivered before, by a handling of the event that died before the broker heard of it.
          end(Exit.void)
          return settled(Effect.logInfo("a duplicate first attempt is not recorded: its delivery was recorded already", { deliveryId: claimed.delivery.id }))
        }
        recorded(Exit.asVoid(exit))
      })
    })
  }
  return { canAttempt, start }
})

/**
 * One attempt of a delivery, if it is still pending, due and not held by another attempt (of this
 * process or another replica): the lease taken in PostgreSQL makes a second submission of the
 * same delivery a no-op. A delivery this process recorded goes with the lease it was born with
 * while that is fresh (`recordingLeaseMs`). Never fails: a storage failure is logged and the
 * sweeper finds the delivery again once its lease ends.
 */
export const attemptDelivery = (deliveryId: string, leased: LeasedDelivery | undefined) =>
  Effect.gen(function*() {
    const { timeoutMs } = yield* DispatcherSettings
    if (leased !== undefined && performance.now() - leased.leasedAt <= timeoutMs) return yield* attempt(leased.claimed)
    const claimed = yield* (yield* DeliveryRepository).claim(deliveryId, timeoutMs + LeaseMarginMs, leased?.claimed.lease)
    if (Option.isSome(claimed)) yield* attempt(claimed.value)
  }).pipe(Effect.catchCause((cause) => Effect.logError("webhook delivery attempt failed; the sweeper will take it again", cause)))
