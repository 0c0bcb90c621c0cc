import { Duration } from "effect"
import { AckPolicy, DeliverPolicy, type JetStreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream"
import { nanos } from "@nats-io/transport-node"

/**
 * The retry wake-ups' stream: one message per scheduled retry, redelivered by a delayed `nak`
 * until it is due. A work queue, so that an acknowledged wake-up leaves the stream; each
 * deployment has its own subject, so that consumers' filters never overlap (a work queue refuses that).
 */
export const WakeupsStream = "WEBHOOK_WAKEUPS"
export const wakeupSubject = (deploymentId: string) => `webhook-wakeups.${deploymentId}`

/** A durable nobody pulls from for this long is deleted, so that deployments that are gone leave nothing behind. */
const InactiveThreshold = nanos(Duration.toMillis(Duration.hours(24)))

/** Created at `replicas` copies (NATS_REPLICAS) when missing; one an operator made is used as it is. */
export const ensureWakeupsStream = async (jsm: JetStreamManager, replicas = 1) => {
  const found = await jsm.streams.info(WakeupsStream).catch(() => undefined)
  if (found === undefined) {
    await jsm.streams.add({
      name: WakeupsStream,
      subjects: ["webhook-wakeups.>"],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: replicas,
      // Beyond the longest default wait (50 h) with margin; PostgreSQL keeps the schedule anyway.
      max_age: nanos(Duration.toMillis(Duration.days(7)))
    })
  }
}

/**
 * Waiting wake-ups stay in the consumer's pending count until due (docs/product-rules.md#webhooks):
 * sized far above what waits, and first attempts never go through this consumer, so a dead
 * endpoint's thousands of retries cannot hold anyone's first attempt.
 */
export const ensureWakeupsConsumer = async (jsm: JetStreamManager, durable: string, deploymentId: string) => {
  const existing = await jsm.consumers.info(WakeupsStream, durable).catch(() => undefined)
  if (existing === undefined) {
    await jsm.consumers.add(WakeupsStream, {
      durable_name: durable,
      filter_subject: wakeupSubject(deploymentId),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      max_deliver: -1,
      max_ack_pending: 200_000,
      ack_wait: nanos(60_000),
      inactive_threshold: InactiveThreshold
    })
  }
}

/**
 * Events given out and not yet acknowledged, all replicas together: each holds up to half of it
 * (NatsWorkers' eventsInFlight), its messages waiting for their first attempts to be recorded.
 */
export const EventsMaxAckPending = 10_000

/**
 * The events' durable of this deployment. A new one starts at `startAt` (the oldest enabled
 * subscription's creation, or now when there is none, never before the deliveries' retention:
 * domain/EventsReplay.ts), not at the stream's beginning: older events concern no subscription,
 * and replaying a long stream would delay every first attempt.
 */
export const ensureEventsConsumer = async (jsm: JetStreamManager, stream: string, durable: string, startAt: Date) => {
  const existing = await jsm.consumers.info(stream, durable).catch(() => undefined)
  // A durable made by an earlier version, which acknowledged before attempting, allowed 1,000.
  // Best effort: refused, the durable works as it is, with fewer messages in hand.
  if (existing !== undefined && existing.config.max_ack_pending !== EventsMaxAckPending) {
    await jsm.consumers.update(stream, durable, { max_ack_pending: EventsMaxAckPending }).catch(() => undefined)
  }
  if (existing === undefined) {
    await jsm.consumers.add(stream, {
      durable_name: durable,
      filter_subject: "events.>",
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: startAt.toISOString(),
      max_deliver: -1,
      // A message is held while its deliveries' first attempts are made and recorded (at most a
      // second in a lane, then a POST's timeout); one held longer than 10 s is said to be worked
      // on (NatsWorkers), so that this is not reached.
      ack_wait: nanos(30_000),
      max_ack_pending: EventsMaxAckPending,
      inactive_threshold: InactiveThreshold
    })
  }
}
