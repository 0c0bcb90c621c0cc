import { restartForever } from "@portfolio/platform/runtime"
import { ApplicationCreatedSubject, Uuid, type WebhookEventKind, WebhookEventKinds } from "@portfolio/domain"
import { DeploymentIdConfig } from "@portfolio/platform/config"
import { ensureEventsStream, NatsSettings, natsConnection, observeConsumer } from "@portfolio/platform/nats"
import { Retention } from "@portfolio/platform/sql"
import { parentSpanOf, traceContextHeadersOf } from "@portfolio/platform/telemetry"
import { Effect, Exit, FiberSet, Layer, Option, Schema, type Tracer } from "effect"
import { type Consumer, jetstream, type JetStreamClient, jetstreamManager, type JsMsg } from "@nats-io/jetstream"
import { wakeupWaitMs } from "../../domain/DeliveryRules.js"
import { eventsDurableStart } from "../../domain/EventsReplay.js"
import { SubscriptionRepository } from "../../ports/SubscriptionRepository.js"
import { ingestEvent } from "../../usecases/Deliveries.js"
import { DeliveryLanes } from "../../usecases/DeliveryLanes.js"
import { DispatcherSettings } from "../../Config.js"
import { ensureEventsConsumer, ensureWakeupsConsumer, ensureWakeupsStream, EventsMaxAckPending, WakeupsStream } from "./Streams.js"
import { JetStreamLink } from "./RetryWakeupsJs.js"

/** The envelope every event of the catalogue has; `data` is sent as it is and not read here. */
const Envelope = Schema.Struct({
  id: Uuid,
  type: Schema.String,
  createdAt: Schema.DateFromString,
  tenantId: Uuid
})
const decodeEnvelopeFields = Schema.decodeUnknownOption(Envelope)
const decodeEnvelope = (body: string) => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return Option.none()
  }
  return decodeEnvelopeFields(parsed)
}
const Wakeup = Schema.fromJsonString(Schema.Struct({ deliveryId: Schema.String, subscriptionId: Schema.String, at: Schema.Number }))
const decodeWakeup = Schema.decodeUnknownOption(Wakeup)

const isKind = (type: string): type is WebhookEventKind => (WebhookEventKinds as ReadonlyArray<string>).includes(type)

/**
 * Events handled at once, for `concurrency` POSTs at once: a message is held until its deliveries'
 * first attempts are recorded, so enough must be in hand to keep every POST slot busy while others
 * wait for their record (four times the slots), and no more: measured under a burst, 256 held for
 * 32 slots made everything they hold live long enough to be promoted, and the dispatcher spent 10%
 * more CPU per delivery than with 128. Bounded by the durable's max_ack_pending (Streams.ts).
 */
export const eventsInFlight = (concurrency: number) => Math.min(Math.max(4 * concurrency, 64), EventsMaxAckPending / 2)

/** A failed handling is redelivered after this: a plain nak would loop at once. */
const RetryDelayMs = 2_000

/** How long a message is held before the broker is told it is being worked on, and how often after. */
const WorkingAfterMs = 10_000

/** Handles one message; settled once the message is acknowledged or given back. */
type Handler = (message: JsMsg) => Promise<void>

const alreadyHandled = Promise.resolve()

/**
 * One event from `EVENTS`, in a fiber: a consumer span (OpenTelemetry messaging conventions)
 * continuing the producer's trace and linked to it, the event's deliveries made with that span's
 * context, the message acknowledged once every one of them is recorded (ingestEvent), given back
 * with a delay otherwise. Kinds outside the catalogue (other services' events) are acknowledged
 * and left alone.
 */
const makeEventHandler = Effect.gen(function*() {
  const run = yield* FiberSet.makeRuntime<Effect.Services<ReturnType<typeof ingestEvent>>>()
  // A message is held until its deliveries' first attempts are recorded: up to a POST's timeout
  // after a wait in a lane. Those held for a while tell the broker they are being worked on, so
  // that it does not give them to another replica once the durable's ack_wait (30 s) has passed.
  const held = new Map<JsMsg, number>()
  const telling = yield* Effect.acquireRelease(
    Effect.sync(() =>
      setInterval(() => {
        const before = performance.now() - WorkingAfterMs
        for (const [message, since] of held) if (since < before) message.working()
      }, WorkingAfterMs)
    ),
    (timer) => Effect.sync(() => clearInterval(timer))
  )
  telling.unref()
  return (message: JsMsg): Promise<void> => {
    const body = message.string()
    const envelope = decodeEnvelope(body)
    if (Option.isNone(envelope) || !isKind(envelope.value.type)) {
      message.ack()
      return alreadyHandled
    }
    const event = envelope.value
    const producer = parentSpanOf(message.headers?.get("traceparent"))
    const attributes = {
      "messaging.system": "nats",
      "messaging.operation.name": "process",
      "messaging.destination.name": message.subject,
      "messaging.message.id": event.id
    }
    const options: Tracer.SpanOptionsNoTrace = producer === undefined
      ? { kind: "consumer", attributes, root: true }
      : { kind: "consumer", attributes, parent: producer, links: [{ span: producer, attributes: {} }] }
    const handling = Effect.useSpan(`process ${message.subject}`, options, (span) =>
      ingestEvent({
        id: event.id,
        tenantId: event.tenantId,
        type: event.type as WebhookEventKind,
        body,
        createdAt: event.createdAt,
        traceparent: traceContextHeadersOf(span).traceparent ?? null
      })).pipe(Effect.tapCause((cause) => Effect.logWarning("event not recorded yet; redelivery scheduled", cause)))
    held.set(message, performance.now())
    return new Promise((resolve) =>
      run(handling).addObserver((exit) => {
        held.delete(message)
        if (Exit.isSuccess(exit)) message.ack()
        else message.nak(RetryDelayMs)
        resolve()
      })
    )
  }
})

/** One wake-up: not due yet, it goes back to wait the rest (a delayed nak); due, its delivery is attempted. */
const makeWakeupHandler = Effect.map(DeliveryLanes, (lanes): Handler => (message) => {
  const wakeup = decodeWakeup(message.string())
  if (Option.isNone(wakeup)) message.term()
  else {
    const wait = wakeupWaitMs(wakeup.value.at, Date.now())
    if (wait > 0) message.nak(wait)
    else {
      Effect.runSync(lanes.submit(wakeup.value.deliveryId, wakeup.value.subscriptionId))
      message.ack()
    }
  }
  return alreadyHandled
})

/** Messages one pull request of a durable's subscription asks for. */
const PullBatch = 256

/**
 * Handles what the durable delivers as it arrives, `concurrency` at a time: events are independent
 * (deliveries are unordered), and the events handled together are recorded in one statement
 * (DeliveryRepositoryPg), so a burst costs a few round trips, not one per event.
 * - One long-lived pull subscription (`consume`), not a `fetch` after another: a message the
 *   server sends as a fetch expires is dropped by the client and waits for the durable's ack_wait
 *   (30 s for events) to come back, as runDurableConsumer's comment tells.
 * - A plain loop handing each message to a handler that answers a promise: measured (Effect 3),
 *   a Stream over the messages with `mapEffect` cost ~1.2 ms of CPU per message here, ten times
 *   everything else an event costs.
 */
const pull = (consumer: Consumer, handle: Handler, concurrency: number) =>
  Effect.gen(function*() {
    const messages = yield* Effect.acquireRelease(
      Effect.tryPromise(() => consumer.consume({ max_messages: PullBatch, expires: 5_000 })),
      (messages) => Effect.promise(() => messages.close()).pipe(Effect.interruptible, Effect.timeout("2 seconds"), Effect.ignore)
    )
    return yield* Effect.tryPromise(async () => {
      const running = new Set<Promise<void>>()
      for await (const message of messages) {
        if (running.size >= concurrency) await Promise.race(running)
        const handled: Promise<void> = handle(message).finally(() => running.delete(handled))
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
export const NatsWorkersLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const settings = yield* NatsSettings
    const { concurrency } = yield* DispatcherSettings
    const deploymentId = yield* DeploymentIdConfig
    const deliveriesKeptFor = yield* Retention.deliveries
    const link = yield* JetStreamLink
    const subscriptions = yield* SubscriptionRepository
    const handleEvent = yield* makeEventHandler
    const handleWakeup = yield* makeWakeupHandler
    const work = Effect.gen(function*() {
      // The events have a connection of their own: a dead endpoint's thousands of wake-ups (their
      // publications, acknowledgements and redeliveries) must not queue ahead of a first event.
      const nc = yield* natsConnection(settings, { name: "webhook-dispatcher-events" })
      const wakeupsConnection = yield* natsConnection(settings, { name: "webhook-dispatcher-wakeups" })
      const jsm = yield* Effect.tryPromise(() => jetstreamManager(nc))
      const js: JetStreamClient = jetstream(nc)
      const wakeupsJs: JetStreamClient = jetstream(wakeupsConnection)
      const eventsStream = yield* Effect.tryPromise(() => ensureEventsStream(jsm, ApplicationCreatedSubject, settings.replicas))
      const startAt = eventsDurableStart(Option.getOrUndefined(yield* subscriptions.oldestEnabled()), new Date(), deliveriesKeptFor)
      const eventsDurable = `webhook-dispatcher-events-${deploymentId}`
      const wakeupsDurable = `webhook-dispatcher-wakeups-${deploymentId}`
      yield* Effect.tryPromise(async () => {
        await ensureEventsConsumer(jsm, eventsStream, eventsDurable, startAt)
        await ensureWakeupsStream(jsm, settings.replicas)
        await ensureWakeupsConsumer(jsm, wakeupsDurable, deploymentId)
      })
      const events = yield* Effect.tryPromise(() => js.consumers.get(eventsStream, eventsDurable))
      const wakeups = yield* Effect.tryPromise(() => wakeupsJs.consumers.get(WakeupsStream, wakeupsDurable))
      yield* observeConsumer(events)
      yield* observeConsumer(wakeups)
      link.current = wakeupsJs
      yield* Effect.logInfo("listening for events and retry wake-ups", { eventsDurable, wakeupsDurable })
      yield* Effect.all([pull(events, handleEvent, eventsInFlight(concurrency)), pull(wakeups, handleWakeup, 1)], { concurrency: 2, discard: true })
    }).pipe(
      Effect.scoped,
      Effect.ensuring(Effect.sync(() => (link.current = undefined))),
      (working) => restartForever(working, "NATS workers stopped; restarting", "2 seconds"),
      Effect.interruptible
    )
    yield* Effect.forkScoped(work)
  })
)
