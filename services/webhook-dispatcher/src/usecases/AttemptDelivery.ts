import { Headers, HttpTraceContext } from "@effect/platform"
import { SubscriptionDisabled } from "@portfolio/domain"
import { newId, UnitOfWork } from "@portfolio/platform"
import { DateTime, Effect, Option } from "effect"
import { disablesAt, isSuccess, nextStep } from "../domain/DeliveryRules.js"
import { deliveryHeaders, signingKey } from "../domain/Signature.js"
import { signingSecrets, type SubscriptionRecord } from "../domain/Subscription.js"
import { DispatcherSettings } from "../Config.js"
import { type ClaimedDelivery, DeliveryRepository, type DeliveryResolution } from "../ports/DeliveryRepository.js"
import { DispatcherEvents } from "../ports/DispatcherEvents.js"
import { RetryWakeups } from "../ports/RetryWakeups.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { type SendOutcome, WebhookSender } from "../ports/WebhookSender.js"

/** Beyond the POST's own timeout, how long a crashed holder keeps a delivery from others. */
const LeaseMarginMs = 5_000

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

const describe = (outcome: SendOutcome) => (outcome._tag === "Answered" ? `HTTP ${outcome.status}` : outcome.error)

/** The POST in a client span (OpenTelemetry HTTP conventions); the URL's path and query may carry a receiver's token: only its origin is recorded. */
const post = (subscription: SubscriptionRecord, headers: Record<string, string>, body: string) =>
  Effect.gen(function*() {
    const sender = yield* WebhookSender
    const outcome = yield* sender.send({ url: subscription.url, headers, body })
    yield* Effect.annotateCurrentSpan(
      outcome._tag === "Answered" ? { "http.response.status_code": outcome.status } : { "error.type": outcome.error }
    )
    return outcome
  }).pipe(Effect.withSpan("POST", {
    kind: "client",
    attributes: { "http.request.method": "POST", "server.address": new URL(subscription.url).hostname, "url.scheme": new URL(subscription.url).protocol.slice(0, -1) }
  }))

/**
 * Settles a failure's count on the subscription in the attempt's transaction; at exactly the
 * threshold it disables the subscription, keeps its waiting deliveries as failed for a later
 * recovery and announces it (its admins get an e-mail).
 */
const countOutcome = (subscription: SubscriptionRecord, succeeded: boolean, lastError: string) =>
  Effect.gen(function*() {
    const subscriptions = yield* SubscriptionRepository
    const { disableAfterFailures } = yield* DispatcherSettings
    const counted = yield* subscriptions.countOutcome(subscription.id, succeeded)
    if (succeeded || Option.isNone(counted)) return false
    const { consecutiveFailures, state } = counted.value
    if (state !== "enabled" || !disablesAt(consecutiveFailures, disableAfterFailures)) return false
    yield* subscriptions.setState(subscription.id, "disabled", "consecutive_failures")
    yield* (yield* DeliveryRepository).failPending(subscription.id, "subscription_disabled")
    yield* (yield* DispatcherEvents).subscriptionDisabled(SubscriptionDisabled.make({
      id: yield* newId,
      type: "webhook.subscription.disabled",
      occurredAt: yield* DateTime.now,
      tenantId: subscription.tenantId,
      subscriptionId: subscription.id,
      url: subscription.url,
      consecutiveFailures,
      lastError
    }))
    yield* Effect.logWarning("webhook subscription disabled after consecutive failures", { subscriptionId: subscription.id, consecutiveFailures })
    return true
  })

const attempt = (claimed: ClaimedDelivery) =>
  Effect.gen(function*() {
    const deliveries = yield* DeliveryRepository
    const found = yield* (yield* SubscriptionRepository).find(claimed.delivery.subscriptionId)
    // Deleted meanwhile: its deliveries went with it.
    if (Option.isNone(found)) return
    const subscription = found.value
    const uow = yield* UnitOfWork
    if (subscription.state !== "enabled") {
      return yield* deliveries.complete(undefined, { _tag: "Failed", reason: "subscription_disabled" }, claimed.delivery.id)
    }
    const { retrySchedule } = yield* DispatcherSettings
    const attemptId = yield* newId
    const started = new Date()
    const keys = signingSecrets(subscription, started).map(signingKey).filter((key) => key !== undefined)
    const headers = deliveryHeaders({
      keys,
      eventId: claimed.delivery.eventId,
      eventType: claimed.delivery.eventType,
      deliveryId: attemptId,
      timestamp: Math.floor(started.getTime() / 1000),
      body: claimed.body
    })
    const outcome = yield* post(subscription, headers, claimed.body)
    const succeeded = outcome._tag === "Answered" && isSuccess(outcome.status)
    const resolution = resolutionOf(succeeded, claimed, retrySchedule, Date.now())
    const disabled = yield* uow.run(Effect.gen(function*() {
      yield* deliveries.complete({
        id: attemptId,
        deliveryId: claimed.delivery.id,
        attempt: claimed.delivery.attempts + 1,
        startedAt: started,
        durationMs: Math.round(outcome.durationMs),
        statusCode: outcome._tag === "Answered" ? outcome.status : null,
        error: outcome._tag === "Failed" ? outcome.error : succeeded ? null : `HTTP ${outcome.status}`,
        responseBody: outcome._tag === "Answered" ? outcome.responseBody : ""
      }, resolution, claimed.delivery.id)
      return yield* countOutcome(subscription, succeeded, describe(outcome))
    }))
    if (resolution._tag === "RetryAt" && !disabled) {
      yield* (yield* RetryWakeups).schedule(claimed.delivery.id, subscription.id, resolution.at)
    }
  }).pipe(Effect.withSpan("webhook deliver", {
    attributes: { "webhook.delivery.id": claimed.delivery.id, "webhook.event.id": claimed.delivery.eventId, "webhook.attempt": claimed.delivery.attempts + 1 },
    ...Option.match(HttpTraceContext.w3c(Headers.fromInput(claimed.traceparent === null ? {} : { traceparent: claimed.traceparent })), {
      onNone: () => ({}),
      onSome: (parent) => ({ parent })
    })
  }))

/**
 * One attempt of a delivery, if it is still pending, due and not held by another attempt (of this
 * process or another replica): the lease taken in PostgreSQL makes a second submission of the
 * same delivery a no-op. Never fails: a storage failure is logged and the sweeper finds the
 * delivery again once its lease ends.
 */
export const attemptDelivery = (deliveryId: string) =>
  Effect.gen(function*() {
    const { timeoutMs } = yield* DispatcherSettings
    const claimed = yield* (yield* DeliveryRepository).claim(deliveryId, timeoutMs + LeaseMarginMs)
    if (Option.isSome(claimed)) yield* attempt(claimed.value)
  }).pipe(Effect.catchAllCause((cause) => Effect.logError("webhook delivery attempt failed; the sweeper will take it again", cause)))
