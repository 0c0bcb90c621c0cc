import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel, Schedule, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { runDurableConsumer } from "../../src/nats/DurableConsumer.js"
import { ensureEventsStream, natsConnection, plainNats } from "../../src/nats/Nats.js"
import { useNatsCluster } from "../../testing/NatsServer.js"

// The platform on a three-server JetStream cluster, as production runs it (NATS_URL listing the
// servers, NATS_REPLICAS=3): what it creates is kept on three servers, and the client and the
// durables ride over the loss of the server that leads the stream.
const cluster = useNatsCluster()

const Event = Schema.Struct({ id: Schema.String })

/** Retried while the cluster elects its leaders (after start, after a kill): JetStream answers "no leader" meanwhile. */
const untilAnswered = <A>(attempt: () => Promise<A>) =>
  Effect.tryPromise(attempt).pipe(Effect.retry({ schedule: Schedule.spaced("250 millis"), times: 120 }))

describe("the platform on a three-server JetStream cluster", () => {
  it.live("keeps EVENTS at NATS_REPLICAS copies, and its durable gets every event across the loss of the stream's leader", () =>
    Effect.gen(function*() {
      const settings = plainNats(cluster.urls(), 3)
      const nc = yield* natsConnection(settings, { name: "cluster-test" })
      const jsm = yield* untilAnswered(() => jetstreamManager(nc))
      const stream = yield* untilAnswered(() => ensureEventsStream(jsm, "events.clustertest.happened", settings.replicas))
      const info = yield* untilAnswered(() => jsm.streams.info(stream))
      expect(info.config.num_replicas).toBe(3)

      const received = new Set<string>()
      yield* Effect.forkScoped(runDurableConsumer({
        nats: settings,
        connectionName: "cluster-test-consumer",
        durable: `cluster-test-${randomUUID().slice(0, 8)}`,
        subject: "events.clustertest.happened",
        schema: Event,
        handle: (event) => Effect.sync(() => void received.add(event.id)),
        retryDelay: "1 second",
        inactiveThreshold: "1 hour",
        deliverPolicy: "new",
        logNames: { listener: "cluster test events", event: "cluster test" }
      }).pipe(Effect.provide(Logger.minimumLogLevel(LogLevel.None))))
      // The durable exists once its listener has made it: events published from then on are its.
      yield* untilAnswered(() => jsm.consumers.list(stream).next()).pipe(
        Effect.filterOrFail((consumers) => consumers.some((c) => c.name.startsWith("cluster-test-")), () => new Error("no durable yet")),
        Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 200 })
      )

      const js = jetstream(nc)
      const sent: Array<string> = []
      const publish = (count: number) =>
        Effect.forEach(Array.from({ length: count }, () => randomUUID()), (id) =>
          untilAnswered(() => js.publish("events.clustertest.happened", JSON.stringify({ id }), { msgID: id })).pipe(
            Effect.tap(() => Effect.sync(() => sent.push(id)))
          ), { discard: true })
      yield* publish(20)

      // The server leading the stream goes away without a word, as a node lost does.
      const leader = (yield* untilAnswered(() => jsm.streams.info(stream))).cluster?.leader
      const lost = cluster.servers().find((server) => server.name === leader)
      expect(lost, `leader ${leader}`).toBeDefined()
      yield* Effect.promise(() => lost!.kill())
      yield* publish(20)

      yield* Effect.suspend(() => (sent.every((id) => received.has(id)) ? Effect.void : Effect.fail("not yet"))).pipe(
        Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 300 })
      )
      expect(sent).toHaveLength(40)
      expect(sent.filter((id) => received.has(id))).toHaveLength(40)
      const after = yield* untilAnswered(() => jsm.streams.info(stream))
      expect(after.cluster?.leader).not.toBe(leader)
      yield* Effect.promise(() => lost!.start())
    }).pipe(Effect.scoped), 120_000)
})
