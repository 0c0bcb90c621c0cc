import { SubscriptionDisabled } from "@portfolio/domain"
import { memoized } from "@portfolio/platform/cache"
import { HttpDurationBuckets } from "@portfolio/platform/http"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { instrument, parentSpanOf } from "@portfolio/platform/telemetry"
import { Clock, DateTime, Deferred, Effect, Exit, Option, type Tracer } from "effect"
import { isRefusal } from "../domain/AttemptErrors.js"
import { disablesAt, isSuccess, nextStep } from "../domain/DeliveryRules.js"
import { deliveryHeaders, signingKey } from "../domain/Signature.js"
import { type DeliveryTarget, signingSecrets } from "../domain/Subscription.js"
import { DispatcherSettings } from "../Config.js"
import { type AttemptRecord, type ClaimedDelivery, DeliveryRepository, type DeliveryResolution, type ReceivedEvent } from "../ports/DeliveryRepository.js"
import { DispatcherOutbox } from "../ports/DispatcherOutbox.js"
import { RetryWakeups } from "../ports/RetryWakeups.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { type SendOutcome, type WebhookRequest, WebhookSender } from "../ports/WebhookSender.js"

/** Beyond the POST's own timeout, how long a crashed holder keeps a delivery from others. */
const LeaseMarginMs = 5_000

/**
 * A delivery recorded by this process, born leased to it, and when (the Clock's milliseconds): it
 * may wait in its subscription's lane before its first attempt.
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

/** The retry rule: where a delivery goes after an attempt, delivered, retried at a time of the schedule, or failed for good. */
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

/**
 * The POST in a client span (OpenTelemetry HTTP conventions) under the delivery's, which nothing
 * runs under: its attributes are set as its answer comes.
 */
const post = (deliver: Tracer.Span, request: WebhookRequest) =>
  Effect.useSpan("POST", { kind: "client", parent: deliver, attributes: postAttributes(request.url) }, (span) =>
    Effect.flatMap(WebhookSender, (sender) =>
      Effect.map(sender.send(request), (outcome) => {
        if (outcome._tag === "Answered") span.attribute("http.response.status_code", outcome.status)
        else span.attribute("error.type", outcome.error)
        return outcome
      })))

/**
 * At exactly the threshold of consecutive failures (counted with the attempt, so concurrent
 * attempts cross it once), the subscription is disabled, its waiting deliveries are kept as failed
 * for a later recovery, and its tenant's admins are told (an event in the outbox), all in the
 * unit of work that records the failure (`complete`).
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
  })

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
const requestOf = (claimed: ClaimedDelivery, attemptId: string, started: Date): WebhookRequest => {
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
 * A delivery whose first attempt is made before anything of it is recorded
 * (docs/product-rules.md#webhooks): `claimed` as its recording would make it, under an id chosen now, and
 * `recorded`, done once when the delivery is durably recorded (its first attempt's success, its
 * failure with the retry it leads to, or the delivery pending when it waited too long to be
 * made) or could not be: the broker's message is acknowledged only once each of its deliveries was.
 */
export interface FirstDelivery {
  readonly event: ReceivedEvent
  readonly claimed: ClaimedDelivery
  /** When it was handed to its lane (the Clock's milliseconds). */
  readonly since: number
  readonly recorded: Deferred.Deferred<void, unknown>
}

/** A first delivery of `event` to `target`, not recorded yet: its record as the recording would write it at `millis` (the Clock's). */
export const firstDeliveryOf = (event: ReceivedEvent, target: DeliveryTarget, deliveryId: string, millis: number): FirstDelivery => {
  const now = new Date(millis)
  return {
    event,
    since: millis,
    recorded: Deferred.makeUnsafe<void, unknown>(),
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

/** What a first delivery's event is told when the dispatcher stops before the delivery was recorded. */
export const dispatcherStopped: Exit.Exit<void, unknown> = Exit.die(new Error("the dispatcher stopped"))
const notRecorded: Exit.Exit<void, unknown> = Exit.die(new Error("the delivery was not recorded"))

/**
 * The recording of a first delivery, before which nothing of it is: with its first attempt when
 * that succeeded (its event, its delivery succeeded and the attempt at once; none when the
 * delivery was recorded already, by a handling of the event that died before the broker heard of
 * it), or pending, due now and leased to this process for `recordingLeaseMs` (a failed first
 * attempt, to settle as any other, or a delivery that waited too long in its lane, to attempt
 * later; none when its subscription was disabled or deleted meanwhile, or the delivery was
 * recorded already). Its event is told how it went, once.
 */
export const recordFirst = (first: FirstDelivery, succeeded: AttemptRecord | undefined): Effect.Effect<Option.Option<ClaimedDelivery>, never, DeliveryRepository | DispatcherSettings> =>
  Effect.flatMap(DeliveryRepository, (deliveries) => {
    const subscriptionId = first.claimed.target.id
    const recording = succeeded !== undefined
      ? Effect.map(deliveries.recordFirstSuccess({ event: first.event, subscriptionId, attempt: succeeded }), (made) => made ? Option.some(first.claimed) : Option.none())
      : Effect.flatMap(DispatcherSettings, ({ timeoutMs }) =>
        deliveries.recordPending(first.event, { subscriptionId, deliveryId: first.claimed.delivery.id }, recordingLeaseMs(timeoutMs)))
    return Effect.onExit(recording, (exit) => Deferred.done(first.recorded, Exit.asVoid(exit)))
  })

/**
 * The attempt of a recorded delivery recorded, with where its delivery goes next (the retry rule)
 * and its subscription's count, all at once; then, on a failure, the subscription disabled at the
 * threshold or the retry's wake-up scheduled.
 */
const complete = (claimed: ClaimedDelivery, attempt: AttemptRecord, outcome: SendOutcome, succeeded: boolean) =>
  Effect.gen(function*() {
    const target = claimed.target
    const { disableAfterFailures, retrySchedule } = yield* DispatcherSettings
    const resolution = resolutionOf(succeeded, claimed, retrySchedule, Date.now())
    const deliveries = yield* DeliveryRepository
    // A success goes through the repository's batch, outside any transaction; a failure and the
    // disabling it brings commit together, so that no one reads the last failure on a
    // subscription still enabled, and a stop between the two cannot leave it so.
    const disabling = succeeded
      ? yield* Effect.as(deliveries.complete(attempt, resolution, target.id, true), false)
      : yield* (yield* UnitOfWork).run(Effect.gen(function*() {
        const counted = yield* deliveries.complete(attempt, resolution, target.id, false)
        if (counted.state !== "enabled" || !disablesAt(counted.consecutiveFailures, disableAfterFailures)) return false
        yield* disable(target, counted.consecutiveFailures, describe(outcome))
        return true
      }))
    const recordAttempt = yield* attemptMetrics
    recordAttempt(claimed, succeeded ? "delivered" : disabling ? "disabled" : resolution._tag === "RetryAt" ? "retrying" : "failed", outcome.durationMs)
    if (!disabling && resolution._tag === "RetryAt") yield* (yield* RetryWakeups).schedule(claimed.delivery.id, target.id, resolution.at)
  })

/** A stack trace per span is an Error per delivery: the hot path's spans go without. */
const NoStackTrace = { captureStackTrace: false } as const

/** A delivery to attempt: a recorded one, or a first one (`first`) not recorded yet. */
interface AttemptOf {
  readonly claimed: ClaimedDelivery
  readonly first?: FirstDelivery
}

/** A first attempt that succeeded, recorded with its delivery (`recordFirst`): nothing more to write. */
const firstDelivered = (first: FirstDelivery, span: Tracer.Span, attempt: AttemptRecord, outcome: SendOutcome) =>
  Effect.flatMap(recordFirst(first, attempt), (recorded) =>
    Option.isNone(recorded)
      ? Effect.withParentSpan(Effect.logInfo("a duplicate first attempt is not recorded: its delivery was recorded already", { deliveryId: attempt.deliveryId }), span, NoStackTrace)
      : Effect.map(attemptMetrics, (recordAttempt) => recordAttempt(first.claimed, "delivered", outcome.durationMs)))

/**
 * What follows a POST. A success frees its slot in the lanes (`posted`) while it is recorded; a
 * failure keeps it until settled, so that no more POSTs go to an endpoint than the subscription
 * allows while its failures are counted. A first delivery is recorded first (`recordFirst`, a
 * success with its attempt), then its attempt completed as any other's.
 */
const settle = (job: AttemptOf, posted: Effect.Effect<void>, span: Tracer.Span, attemptId: string, started: Date, outcome: SendOutcome) => {
  const succeeded = isDelivered(outcome)
  const attempt = attemptRecordOf(attemptId, job.claimed, started, outcome, succeeded)
  if (succeeded) {
    return Effect.andThen(posted, job.first === undefined ? complete(job.claimed, attempt, outcome, true) : firstDelivered(job.first, span, attempt, outcome))
  }
  // Under the delivery's span, so that the logs of a failure carry its trace.
  return Effect.withParentSpan(Effect.gen(function*() {
    if (outcome._tag === "Failed") yield* logFailure(job.claimed, attemptId, outcome)
    if (job.first === undefined) return yield* complete(job.claimed, attempt, outcome, false)
    const recorded = yield* recordFirst(job.first, undefined)
    if (Option.isNone(recorded)) {
      return yield* Effect.logInfo("a failed first attempt is not recorded: its subscription changed, or its delivery was recorded already", {
        subscriptionId: job.claimed.target.id,
        deliveryId: attempt.deliveryId
      })
    }
    yield* complete(recorded.value, attempt, outcome, false)
  }), span, NoStackTrace)
}

const deliverSpan = "webhook deliver"

/** The event's trace: the span of its recording by the dispatcher, whose context the event row keeps; a trace of its own without. */
const deliverSpanOptions = (claimed: ClaimedDelivery): Tracer.SpanOptionsNoTrace => {
  const attributes = {
    "webhook.delivery.id": claimed.delivery.id,
    "webhook.event.id": claimed.delivery.eventId,
    "webhook.attempt": claimed.delivery.attempts + 1
  }
  const parent = parentSpanOf(claimed.traceparent)
  return parent === undefined ? { attributes, root: true } : { attributes, parent }
}

/** One attempt, in the delivery's span: the POST, signed, then what follows it. */
const attempt = (job: AttemptOf, posted: Effect.Effect<void>) => {
  const claimed = job.claimed
  if (claimed.target.state !== "enabled") {
    return Effect.flatMap(DeliveryRepository, (deliveries) => deliveries.release(claimed.delivery.id, { _tag: "Failed", reason: "subscription_disabled" }))
  }
  return Effect.useSpan(deliverSpan, deliverSpanOptions(claimed), (span) =>
    Effect.flatMap(newId, (attemptId) => {
      const started = new Date()
      return Effect.flatMap(post(span, requestOf(claimed, attemptId, started)), (outcome) => settle(job, posted, span, attemptId, started, outcome))
    }))
}

/**
 * One attempt of a delivery, if it is still pending, due and not held by another attempt (of this
 * process or another replica): the lease taken in PostgreSQL makes a second submission of the
 * same delivery a no-op. A delivery this process recorded goes with the lease it was born with
 * while that is fresh (`recordingLeaseMs`). Never fails: a storage failure is logged and the
 * sweeper finds the delivery again once its lease ends. `posted`: see `settle`.
 */
export const attemptDelivery = (deliveryId: string, leased: LeasedDelivery | undefined, posted: Effect.Effect<void> = Effect.void) =>
  Effect.gen(function*() {
    const { timeoutMs } = yield* DispatcherSettings
    if (leased !== undefined && (yield* Clock.currentTimeMillis) - leased.leasedAt <= timeoutMs) return yield* attempt({ claimed: leased.claimed }, posted)
    const claimed = yield* (yield* DeliveryRepository).claim(deliveryId, timeoutMs + LeaseMarginMs, leased?.claimed.lease)
    if (Option.isSome(claimed)) yield* attempt({ claimed: claimed.value }, posted)
  }).pipe(Effect.catchCause((cause) => Effect.logError("webhook delivery attempt failed; the sweeper will take it again", cause)))

/**
 * The first attempt of a delivery not recorded yet (FirstDelivery), recorded once it ended. Never
 * fails: a storage failure is logged, and its event, told the delivery was not recorded, is handled
 * again. Interrupted (the dispatcher stops), nothing is recorded, and its event is told so.
 */
export const attemptFirst = (first: FirstDelivery, posted: Effect.Effect<void> = Effect.void) =>
  attempt({ claimed: first.claimed, first }, posted).pipe(
    Effect.catchCause((cause) =>
      Effect.gen(function*() {
        const recorded = (yield* Deferred.isDone(first.recorded)) && Exit.isSuccess(yield* Effect.exit(Deferred.await(first.recorded)))
        yield* Effect.logError(`webhook delivery attempt ${recorded ? "failed; the sweeper will take it again" : "not recorded; its event will be handled again"}`, cause)
      })),
    Effect.onExit((exit) => Deferred.done(first.recorded, Exit.hasInterrupts(exit) ? dispatcherStopped : notRecorded))
  )

/** The services an attempt needs. */
export type AttemptServices = Effect.Services<ReturnType<typeof attemptDelivery>> | Effect.Services<ReturnType<typeof attemptFirst>>
