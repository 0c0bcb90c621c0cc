import { Headers, HttpTraceContext } from "@effect/platform"
import { ApplicationCreatedSubject, WebhookEventKinds, type WebhookEventKind } from "@portfolio/domain"
import { DeploymentIdConfig, ensureEventsStream, NatsConfig, natsConnection, observeConsumer } from "@portfolio/platform"
import { Effect, FiberSet, Layer, Option, Schedule, Schema } from "effect"
import type { Consumer, JetStreamClient, JsMsg } from "nats"
import { wakeupWaitMs } from "../../domain/DeliveryRules.js"
import { SubscriptionRepository } from "../../ports/SubscriptionRepository.js"
import { ingestEvent } from "../../usecases/Deliveries.js"
import { DeliveryLanes } from "../../usecases/DeliveryLanes.js"
import { ensureEventsConsumer, ensureWakeupsConsumer, ensureWakeupsStream, WakeupsStream } from "./Streams.js"
import { JetStreamLink } from "./RetryWakeupsJs.js"

/** The envelope every event of the catalogue has; `data` is sent as it is and not read here. */
const Envelope = Schema.parseJson(Schema.Struct({
  id: Schema.UUID,
  type: Schema.String,
  createdAt: Schema.Date,
  tenantId: Schema.UUID
}))
const decodeEnvelope = Schema.decodeUnknownOption(Envelope)
const Wakeup = Schema.parseJson(Schema.Struct({ deliveryId: Schema.String, subscriptionId: Schema.String, at: Schema.Number }))
const decodeWakeup = Schema.decodeUnknownOption(Wakeup)

const isKind = (type: string): type is WebhookEventKind => (WebhookEventKinds as ReadonlyArray<string>).includes(type)

/** Events handled at once: as many as one fetch brings, so that they share a statement. */
const EventsInFlight = 256

/** A failed handling is redelivered after this: a plain nak would loop at once. */
const RetryDelayMs = 2_000

const traceparentOf = Effect.map(Effect.currentSpan.pipe(Effect.option), Option.map((s) => `00-${s.traceId}-${s.spanId}-${s.sampled ? "01" : "00"}`))

/**
 * One event from `EVENTS`: a consumer span (OpenTelemetry messaging conventions) continuing the
 * producer's trace and linked to it; kinds outside the catalogue (other services' events) are
 * acknowledged and left alone.
 */
const handleEvent = (message: JsMsg) => {
  const body = message.string()
  const envelope = decodeEnvelope(body)
  if (Option.isNone(envelope) || !isKind(envelope.value.type)) return Effect.sync(() => message.ack())
  const event = envelope.value
  const producer = HttpTraceContext.w3c(Headers.fromInput({ traceparent: message.headers?.get("traceparent") ?? "" }))
  return Effect.gen(function*() {
    const traceparent = yield* traceparentOf
    yield* ingestEvent({
      id: event.id,
      tenantId: event.tenantId,
      type: event.type as WebhookEventKind,
      body,
      createdAt: event.createdAt,
      traceparent: Option.getOrNull(traceparent)
    })
    message.ack()
  }).pipe(
    Effect.withSpan(`process ${message.subject}`, {
      kind: "consumer",
      captureStackTrace: false,
      attributes: {
        "messaging.system": "nats",
        "messaging.operation.name": "process",
        "messaging.destination.name": message.subject,
        "messaging.message.id": event.id
      },
      ...Option.match(producer, {
        onNone: () => ({}),
        onSome: (span) => ({ parent: span, links: [{ _tag: "SpanLink" as const, span, attributes: {} }] })
      })
    }),
    Effect.catchAllCause((cause) =>
      Effect.zipRight(Effect.sync(() => message.nak(RetryDelayMs)), Effect.logWarning("event not recorded yet; redelivery scheduled", cause)))
  )
}

/** One wake-up: not due yet, it goes back to wait the rest (a delayed nak); due, its delivery is attempted. */
const handleWakeup = (message: JsMsg) =>
  Effect.flatMap(DeliveryLanes, (lanes) =>
    Effect.sync(() => {
      const wakeup = decodeWakeup(message.string())
      if (Option.isNone(wakeup)) return message.term()
      const wait = wakeupWaitMs(wakeup.value.at, Date.now())
      if (wait > 0) return message.nak(wait)
      lanes.submit(wakeup.value.deliveryId, wakeup.value.subscriptionId)
      message.ack()
    }))

/** Messages one pull request of a durable's subscription asks for. */
const PullBatch = 256

/**
 * Handles what the durable delivers as it arrives, `concurrency` at a time: events are independent
 * (deliveries are unordered), and the events handled together are recorded in one statement
 * (DeliveryRepositoryPg), so a burst costs a few round trips, not one per event.
 * - One long-lived pull subscription (`consume`), not a `fetch` after another: a message the
 *   server sends as a fetch expires is dropped by the client and waits for the durable's ack_wait
 *   (30 s for events) to come back, as runDurableConsumer's comment tells.
 * - A plain loop handing each message to a fiber of a FiberSet (interrupted with the scope):
 *   measured, a Stream over the messages with `mapEffect` cost ~1.2 ms of CPU per message here,
 *   ten times everything else an event costs.
 */
const pull = <R>(consumer: Consumer, handle: (m: JsMsg) => Effect.Effect<void, never, R>, concurrency: number) =>
  Effect.gen(function*() {
    const run = yield* FiberSet.makeRuntimePromise<R>()
    const messages = yield* Effect.acquireRelease(
      Effect.tryPromise(() => consumer.consume({ max_messages: PullBatch, expires: 5_000 })),
      (messages) => Effect.promise(() => messages.close()).pipe(Effect.interruptible, Effect.timeout("2 seconds"), Effect.ignore)
    )
    return yield* Effect.tryPromise(async () => {
      const running = new Set<Promise<void>>()
      for await (const message of messages) {
        if (running.size >= concurrency) await Promise.race(running)
        const handled: Promise<void> = run(handle(message)).finally(() => running.delete(handled))
        running.add(handled)
      }
      await Promise.all(running)
      throw new Error("the durable's messages ended")
    })
  }).pipe(Effect.scoped)

/**
 * The dispatcher's life on NATS: the connection (made in the background, so that the admin API
 * serves while NATS is away), the events' durable and the wake-ups' durable of this deployment.
 * Anything that breaks restarts the whole after a pause; PostgreSQL keeps every delivery meanwhile.
 */
export const NatsWorkersLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const settings = yield* NatsConfig
    const deploymentId = yield* DeploymentIdConfig
    const link = yield* JetStreamLink
    const subscriptions = yield* SubscriptionRepository
    const work = Effect.gen(function*() {
      // The events have a connection of their own: a dead endpoint's thousands of wake-ups (their
      // publications, acknowledgements and redeliveries) must not queue ahead of a first event.
      const nc = yield* natsConnection(settings, { name: "webhook-dispatcher-events" })
      const wakeupsConnection = yield* natsConnection(settings, { name: "webhook-dispatcher-wakeups" })
      const jsm = yield* Effect.tryPromise(() => nc.jetstreamManager())
      const js: JetStreamClient = nc.jetstream()
      const wakeupsJs: JetStreamClient = wakeupsConnection.jetstream()
      const eventsStream = yield* Effect.tryPromise(() => ensureEventsStream(jsm, ApplicationCreatedSubject))
      const startAt = Option.getOrElse(yield* subscriptions.oldestEnabled(), () => new Date())
      const eventsDurable = `webhook-dispatcher-events-${deploymentId}`
      const wakeupsDurable = `webhook-dispatcher-wakeups-${deploymentId}`
      yield* Effect.tryPromise(async () => {
        await ensureEventsConsumer(jsm, eventsStream, eventsDurable, startAt)
        await ensureWakeupsStream(jsm)
        await ensureWakeupsConsumer(jsm, wakeupsDurable, deploymentId)
      })
      const events = yield* Effect.tryPromise(() => js.consumers.get(eventsStream, eventsDurable))
      const wakeups = yield* Effect.tryPromise(() => wakeupsJs.consumers.get(WakeupsStream, wakeupsDurable))
      yield* observeConsumer(events)
      yield* observeConsumer(wakeups)
      link.current = wakeupsJs
      yield* Effect.logInfo("listening for events and retry wake-ups", { eventsDurable, wakeupsDurable })
      yield* Effect.all([pull(events, handleEvent, EventsInFlight), pull(wakeups, handleWakeup, 1)], { concurrency: 2, discard: true })
    }).pipe(
      Effect.scoped,
      Effect.ensuring(Effect.sync(() => (link.current = undefined))),
      Effect.tapErrorCause((cause) => Effect.logWarning("NATS workers stopped; restarting", cause)),
      Effect.retry(Schedule.spaced("2 seconds")),
      Effect.interruptible
    )
    yield* Effect.forkScoped(work)
  })
)
