import type { DeliveryStatus, WebhookEventKind } from "@portfolio/domain"
import { Context, type Effect, type Option } from "effect"
import type { DeliveryTarget } from "../domain/Subscription.js"

/** An event as received, its body kept byte for byte: every attempt signs and sends exactly it. */
export interface ReceivedEvent {
  readonly id: string
  readonly tenantId: string
  readonly type: WebhookEventKind
  readonly body: string
  readonly createdAt: Date
  /** The W3C traceparent of the consumer span that received it: attempts continue that trace. */
  readonly traceparent: string | null
}

export interface DeliveryRecord {
  readonly id: string
  readonly subscriptionId: string
  readonly eventId: string
  readonly eventType: WebhookEventKind
  readonly status: DeliveryStatus
  readonly failureReason: "attempts_exhausted" | "subscription_disabled" | null
  readonly attempts: number
  readonly nextAttemptAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** A delivery this process holds the lease of, with what its attempt needs. */
export interface ClaimedDelivery {
  readonly delivery: DeliveryRecord
  /** 1 for the first POST of the current round (a redelivery starts a round). */
  readonly roundAttempt: number
  readonly body: string
  readonly traceparent: string | null
  /** Its subscription as it stands when the lease is taken. */
  readonly target: DeliveryTarget
  /** The lease's end as the database wrote it, opaque: what lets this holder take its own lease again (`claim`). */
  readonly lease: string
}

export interface AttemptRecord {
  readonly id: string
  readonly deliveryId: string
  readonly attempt: number
  readonly startedAt: Date
  readonly durationMs: number
  readonly statusCode: number | null
  readonly error: string | null
  readonly responseBody: string
}

export type DeliveryResolution =
  | { readonly _tag: "Succeeded" }
  | { readonly _tag: "RetryAt"; readonly at: Date }
  | { readonly _tag: "Failed"; readonly reason: "attempts_exhausted" | "subscription_disabled" }

/** The subscription's failure count and state once an attempt was counted. */
export interface CountedOutcome {
  readonly consecutiveFailures: number
  readonly state: "enabled" | "disabled"
}

/** One subscription's delivery of an event, under an id the caller chose before anything was recorded. */
export interface NewDelivery {
  readonly subscriptionId: string
  readonly deliveryId: string
}

/** A first attempt that succeeded before anything of its delivery (`attempt.deliveryId`) was recorded. */
export interface FirstSuccess {
  readonly event: ReceivedEvent
  readonly subscriptionId: string
  readonly attempt: AttemptRecord
}

export interface DeliveryRepositoryShape {
  /**
   * The subscriptions an event is to be delivered to: the enabled ones of its tenant listening to
   * its kind and created before it, without a delivery of it yet. Read only: what is delivered is
   * recorded once its first attempt ended (`recordFirstSuccess`, or `recordPending`).
   */
  readonly listening: (event: ReceivedEvent) => Effect.Effect<ReadonlyArray<DeliveryTarget>>
  /**
   * Records the delivery (and its event, when new) pending, due now, and already leased to the
   * caller for `leaseMs` (its next attempt needs no claim), if its subscription is still enabled and
   * listening to the event and has no delivery of it yet: a first attempt that failed, or that
   * waited too long to be made. None otherwise.
   */
  readonly recordPending: (event: ReceivedEvent, delivery: NewDelivery, leaseMs: number) => Effect.Effect<Option.Option<ClaimedDelivery>>
  /**
   * Records a first attempt that succeeded, with its event and its delivery (succeeded at once),
   * and resets its subscription's failure count, all at once. False when the delivery was recorded
   * already (the event came back after a crash): nothing is written for it then.
   */
  readonly recordFirstSuccess: (first: FirstSuccess) => Effect.Effect<boolean>
  /**
   * Takes the lease of a pending, due, unleased delivery; none when another holds it or it is not
   * due. `ownLease` (a ClaimedDelivery's `lease`) lets the holder of that lease take it again,
   * renewed, with the delivery and its subscription as they stand now.
   */
  readonly claim: (id: string, leaseMs: number, ownLease?: string) => Effect.Effect<Option.Option<ClaimedDelivery>>
  /**
   * Records the attempt, where the delivery goes next (releasing the lease), and the outcome on its
   * subscription's failure count (a success resets it, a failure adds one), all at once.
   */
  readonly complete: (attempt: AttemptRecord, resolution: DeliveryResolution, subscriptionId: string, succeeded: boolean) => Effect.Effect<CountedOutcome>
  /** Where the delivery goes when no POST was made (its subscription was disabled), releasing the lease. */
  readonly release: (deliveryId: string, resolution: DeliveryResolution) => Effect.Effect<void>
  /** Marks every pending delivery of the subscription failed (it was disabled): kept for a later recovery. */
  readonly failPending: (subscriptionId: string, reason: "subscription_disabled") => Effect.Effect<number>
  /** Pending deliveries due for at least `graceMs` and not leased: their wake-up was lost or is late. */
  readonly overdue: (graceMs: number, limit: number) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly subscriptionId: string }>>
  readonly find: (id: string) => Effect.Effect<Option.Option<DeliveryRecord>>
  readonly list: (subscriptionId: string, status: DeliveryStatus | undefined, limit: number) => Effect.Effect<ReadonlyArray<DeliveryRecord>>
  readonly attempts: (deliveryId: string) => Effect.Effect<ReadonlyArray<AttemptRecord>>
  /** Makes the delivery pending and due now with a new round; none when it is unknown, "in-flight" when an attempt holds it. */
  readonly redeliver: (id: string) => Effect.Effect<Option.Option<DeliveryRecord | "in-flight">>
  /** Makes every failed delivery of the subscription created since `since` pending, due now; returns them. */
  readonly recover: (subscriptionId: string, since: Date) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly subscriptionId: string }>>
}

export class DeliveryRepository extends Context.Service<
  DeliveryRepository,
  DeliveryRepositoryShape
>()("@portfolio/webhook-dispatcher/DeliveryRepository") {}
