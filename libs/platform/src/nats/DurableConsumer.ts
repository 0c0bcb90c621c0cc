import { restartForever } from "../runtime/Supervision.js"
import { Duration, Effect, Result, Schema } from "effect"
import { AckPolicy, type Consumer, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from "@nats-io/jetstream"
import { nanos } from "@nats-io/transport-node"
import { Metrics, observe } from "../telemetry/Metrics.js"
import { ensureEventsStream, natsConnection, type NatsConnection, type NatsSettingsShape } from "./Nats.js"

/** Where a durable created by `runDurableConsumer` starts; an existing durable keeps its own. */
export type DurableDeliverPolicy = "all" | "last" | "new"

const deliverPolicies: Record<DurableDeliverPolicy, DeliverPolicy> = {
  all: DeliverPolicy.All,
  last: DeliverPolicy.Last,
  new: DeliverPolicy.New
}

export interface DurableConsumerOptions<A, I, R> {
  readonly nats: NatsSettingsShape
  /** The connection's name, as the server lists it. */
  readonly connectionName: string
  /** Shared by the replicas of a deployment, so that each event is handled by one of them. */
  readonly durable: string
  /** An event subject of the `EVENTS` stream, the durable's filter. */
  readonly subject: string
  /** The event, read from the message body as JSON. */
  readonly schema: Schema.Codec<A, I>
  readonly handle: (event: A) => Effect.Effect<void, unknown, R>
  /** Redelivery delay after a failed handling: a plain nak would have JetStream redeliver at once, in a tight loop. */
  readonly retryDelay: Duration.Input
  /** A durable nobody pulls from for this long is deleted by the server. */
  readonly inactiveThreshold: Duration.Input
  readonly deliverPolicy: DurableDeliverPolicy
  /** Unset, the server's default. */
  readonly ackWait?: Duration.Input
  /**
   * What the log lines call the listener (`listening for <listener>`, `<listener> listener stopped;
   * restarting`) and the event (`<event> event could not be read; dropped`, `<event> handling
   * failed; redelivery scheduled`).
   */
  readonly logNames: { readonly listener: string; readonly event: string }
}

/** How long one pull waits for a message before asking again. */
const PullExpiresMs = 5_000

/** The pause before a listener whose connection or durable failed starts again. */
const RestartPause = "2 seconds"

const ensureConsumer = <A, I, R>(nc: NatsConnection, options: DurableConsumerOptions<A, I, R>) =>
  Effect.tryPromise(async () => {
    const jsm = await jetstreamManager(nc)
    const streamName = await ensureEventsStream(jsm, options.subject, options.nats.replicas)
    const existing = await jsm.consumers.info(streamName, options.durable).catch(() => undefined)
    if (existing === undefined) {
      await jsm.consumers.add(streamName, {
        durable_name: options.durable,
        filter_subject: options.subject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: deliverPolicies[options.deliverPolicy],
        // Never given up on: a failed handling waits for its dependency rather than losing the event.
        max_deliver: -1,
        ...(options.ackWait === undefined ? {} : { ack_wait: nanos(Duration.toMillis(options.ackWait)) }),
        inactive_threshold: nanos(Duration.toMillis(options.inactiveThreshold))
      })
    }
    return jetstream(nc).consumers.get(streamName, options.durable)
  })

/**
 * The backlog of a durable the service owns, as metrics, for the life of the scope: the messages
 * not given to it yet, and those given and not acknowledged (in hand, or waiting for a delayed
 * redelivery: both count against `max_ack_pending`, which stalls the durable once reached). Read
 * from the consumer's info when the metrics are read, reused for 5 seconds.
 */
export const observeConsumer = (consumer: Consumer) =>
  Effect.gen(function*() {
    const { meter } = yield* Metrics
    const pending = meter.createObservableGauge("portfolio.jetstream.consumer.pending", {
      unit: "{message}",
      description: "Messages of the stream matching the durable's filter and not yet delivered to it."
    })
    const ackPending = meter.createObservableGauge("portfolio.jetstream.consumer.ack_pending", {
      unit: "{message}",
      description: "Messages delivered to the durable and not yet acknowledged, delayed redeliveries included."
    })
    yield* observe({
      instruments: [pending, ackPending],
      read: Effect.tryPromise(() => consumer.info()),
      reuseFor: "5 seconds",
      report: (observed, info) => {
        const attributes = { "messaging.destination.name": info.stream_name, "messaging.consumer.group.name": info.name }
        observed.observe(pending, info.num_pending, attributes)
        observed.observe(ackPending, info.num_ack_pending, attributes)
      }
    })
  })

/**
 * A JetStream durable on one event subject, handled one message at a time until interrupted (fork
 * it into the scope it should live for): a body that cannot be read is terminated, since no
 * redelivery would read it better; a handled event is acknowledged; a failed handling is
 * redelivered after `retryDelay`. While NATS is unreachable or the durable cannot be had, it
 * starts again after a pause, so that the service serves without it.
 */
export const runDurableConsumer = <A, I, R>(options: DurableConsumerOptions<A, I, R>) => {
  const decode = Schema.decodeUnknownResult(Schema.fromJsonString(options.schema))
  const { event, listener } = options.logNames
  const retryDelayMs = Duration.toMillis(options.retryDelay)

  const handle = (message: JsMsg) =>
    Result.match(decode(message.string()), {
      onFailure: (error) =>
        Effect.sync(() => message.term()).pipe(
          Effect.andThen(Effect.logError(`${event} event could not be read; dropped`, { seq: message.seq, error: error.message }))
        ),
      onSuccess: (decoded) =>
        options.handle(decoded).pipe(
          Effect.matchCauseEffect({
            onSuccess: () => Effect.sync(() => message.ack()),
            onFailure: (cause) =>
              Effect.sync(() => message.nak(retryDelayMs)).pipe(
                Effect.andThen(Effect.logWarning(`${event} handling failed; redelivery scheduled`, cause))
              )
          })
        )
    })

  return Effect.gen(function*() {
    const nc = yield* natsConnection(options.nats, { name: options.connectionName })
    const consumer = yield* ensureConsumer(nc, options)
    // Forked: whatever the metrics' registration waits for, the listening never waits for it.
    yield* Effect.forkScoped(observeConsumer(consumer))
    // One long-lived pull subscription rather than `next()` after `next()`: `next()` gives up on its
    // pull with a client timer 5% after the server's expiry, and when the event loop is late (a busy
    // pod) the timer runs before the socket is read, so a message the server sent in those last
    // moments is dropped and comes back only after the durable's ack_wait. The subscription keeps
    // its pulls going and buffers what arrives; one message at a time keeps the ack_wait clock of
    // the messages in hand to the one being handled. A deleted durable or stream ends it (and the
    // listener starts again, re-creating them) rather than waiting for them forever.
    const messages = yield* Effect.acquireRelease(
      Effect.tryPromise(() => consumer.consume({ max_messages: 1, expires: PullExpiresMs, abort_on_missing_resource: true })),
      // Interruptible, or a finalizer's timeout could not cut it short.
      (messages) => Effect.promise(() => messages.close()).pipe(Effect.interruptible, Effect.timeout("2 seconds"), Effect.ignore)
    )
    const next = messages[Symbol.asyncIterator]()
    yield* Effect.logInfo(`listening for ${listener}`, { durable: options.durable })
    return yield* Effect.tryPromise(() => next.next()).pipe(
      Effect.flatMap((result) => (result.done === true ? Effect.fail(new Error("the durable's messages ended")) : handle(result.value))),
      Effect.forever
    )
  }).pipe(
    Effect.scoped,
    (listening) => restartForever(listening, `${listener} listener stopped; restarting`, RestartPause),
    Effect.interruptible
  )
}
