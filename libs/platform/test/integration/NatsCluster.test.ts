import { SqlClient } from "effect/sql"
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, References, Schedule, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { runDurableConsumer } from "../../src/nats/DurableConsumer.js"
import { ensureEventsStream, NatsSettings, natsConnection, type NatsSettingsShape, plainNats } from "../../src/nats/Nats.js"
import { appendToOutbox, createOutboxTable, EventPublisherJs, OutboxRelayLive } from "../../src/nats/Outbox.js"
import { SchemaMigrationsLive } from "../../src/sql/Migrations.js"
import { FreshPgLive } from "../../testing/FreshDatabase.js"
import { useNatsCluster } from "../../testing/NatsServer.js"

// The platform on a three-server JetStream cluster, as production runs it (NATS_URL listing the
// servers, NATS_REPLICAS=3): what it creates is kept on three servers, and the client and the
// durables ride over the loss of the server that leads the stream.
const cluster = useNatsCluster()

const Event = Schema.Struct({ id: Schema.String })

/** Retried while the cluster elects its leaders (after start, after a kill): JetStream answers "no leader" meanwhile. */
const untilAnswered = <A>(attempt: () => Promise<A>) =>
  Effect.tryPromise(attempt).pipe(Effect.retry({ schedule: Schedule.spaced("250 millis"), times: 120 }))

/** Every event of `subject` a durable of its own receives while the scope lives, by id. */
const receivedOn = (settings: NatsSettingsShape, subject: string) =>
  Effect.gen(function*() {
    const received = new Set<string>()
    const durable = `cluster-test-${randomUUID().slice(0, 8)}`
    yield* Effect.forkScoped(runDurableConsumer({
      nats: settings,
      connectionName: "cluster-test-consumer",
      durable,
      subject,
      schema: Event,
      handle: (event) => Effect.sync(() => void received.add(event.id)),
      retryDelay: "1 second",
      inactiveThreshold: "1 hour",
      deliverPolicy: "new",
      logNames: { listener: "cluster test events", event: "cluster test" }
    }).pipe(Effect.provide(Layer.succeed(References.MinimumLogLevel, "None"))))
    return { received, durable }
  })

/** Resolves once the durable exists (its listener made it): events published from then on are its. */
const durableMade = (jsm: Awaited<ReturnType<typeof jetstreamManager>>, stream: string, durable: string) =>
  untilAnswered(() => jsm.consumers.list(stream).next()).pipe(
    Effect.filterOrFail((consumers) => consumers.some((c) => c.name === durable), () => new Error("no durable yet")),
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 200 })
  )

/** The server leading `stream`, killed without a word, as a node lost is; answers it, to be started again. */
const killLeader = (jsm: Awaited<ReturnType<typeof jetstreamManager>>, stream: string) =>
  Effect.gen(function*() {
    const leader = (yield* untilAnswered(() => jsm.streams.info(stream))).cluster?.leader
    const lost = cluster.servers().find((server) => server.name === leader)
    expect(lost, `leader ${leader}`).toBeDefined()
    yield* Effect.promise(() => lost!.kill())
    return { leader, lost: lost! }
  })

const until = (done: () => boolean) =>
  Effect.suspend(() => (done() ? Effect.void : Effect.fail("not yet"))).pipe(Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 300 }))

// A service's outbox, migrated as a service migrates its own.
const outboxSchema = "clustered"
const OutboxDatabase = SchemaMigrationsLive(outboxSchema, { "0001_outbox": createOutboxTable(outboxSchema) }).pipe(Layer.provideMerge(FreshPgLive("it_cluster_outbox", 4)))

describe("the platform on a three-server JetStream cluster", () => {
  it.live("keeps EVENTS at NATS_REPLICAS copies, and its durable gets every event across the loss of the stream's leader", () =>
    Effect.gen(function*() {
      const settings = plainNats(cluster.urls(), 3)
      const nc = yield* natsConnection(settings, { name: "cluster-test" })
      const jsm = yield* untilAnswered(() => jetstreamManager(nc))
      const stream = yield* untilAnswered(() => ensureEventsStream(jsm, "events.clustertest.happened", settings.replicas))
      const info = yield* untilAnswered(() => jsm.streams.info(stream))
      expect(info.config.num_replicas).toBe(3)

      const { durable, received } = yield* receivedOn(settings, "events.clustertest.happened")
      yield* durableMade(jsm, stream, durable)

      const js = jetstream(nc)
      const sent: Array<string> = []
      const publish = (count: number) =>
        Effect.forEach(Array.from({ length: count }, () => randomUUID()), (id) =>
          untilAnswered(() => js.publish("events.clustertest.happened", JSON.stringify({ id }), { msgID: id })).pipe(
            Effect.tap(() => Effect.sync(() => sent.push(id)))
          ), { discard: true })
      yield* publish(20)

      const { leader, lost } = yield* killLeader(jsm, stream)
      yield* publish(20)

      yield* until(() => sent.every((id) => received.has(id)))
      expect(sent).toHaveLength(40)
      expect(sent.filter((id) => received.has(id))).toHaveLength(40)
      const after = yield* untilAnswered(() => jsm.streams.info(stream))
      expect(after.cluster?.leader).not.toBe(leader)
      yield* Effect.promise(() => lost.start())
    }).pipe(Effect.scoped), 120_000)

  it.live("relays every committed outbox row to the stream once, across the loss of the stream's leader", () =>
    Effect.gen(function*() {
      const settings = plainNats(cluster.urls(), 3)
      const subject = "events.clusterrelay.happened"
      const nc = yield* natsConnection(settings, { name: "cluster-relay-test" })
      const jsm = yield* untilAnswered(() => jetstreamManager(nc))
      const stream = yield* untilAnswered(() => ensureEventsStream(jsm, subject, settings.replicas))
      const { durable, received } = yield* receivedOn(settings, subject)
      yield* durableMade(jsm, stream, durable)
      yield* Layer.build(OutboxRelayLive(outboxSchema, EventPublisherJs("cluster-relay-test").pipe(Layer.provide(Layer.succeed(NatsSettings, settings))), "1 second"))

      const sql = yield* SqlClient.SqlClient
      const written: Array<string> = []
      // Each its own transaction, as a service's writes are; the relay wakes at each commit.
      const write = (count: number) =>
        Effect.forEach(Array.from({ length: count }, () => randomUUID()), (id) =>
          sql.withTransaction(appendToOutbox(outboxSchema, [{ id, subject, payload: { id } }])).pipe(
            Effect.tap(() => Effect.sync(() => written.push(id)))
          ), { discard: true })
      yield* write(20)
      const { leader, lost } = yield* killLeader(jsm, stream)
      yield* write(20)

      yield* until(() => written.every((id) => received.has(id)))
      // The relay marks rows published once the stream has taken them, which a consumer may see
      // first: a loaded machine showed 30 of 40 rows delivered and not yet marked.
      const unpublished = sql<{ n: number }>`SELECT count(*)::int AS n FROM clustered.outbox WHERE published_at IS NULL`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )
      yield* unpublished.pipe(Effect.filterOrFail((n) => n === 0), Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 100 }), Effect.ignore)
      expect(yield* unpublished).toBe(0)
      // In the stream once each: a publish retried after an answer lost to the election is the same message id.
      const info = yield* untilAnswered(() => jsm.streams.info(stream, { subjects_filter: subject }))
      expect(info.state.subjects?.[subject]).toBe(40)
      expect(info.cluster?.leader).not.toBe(leader)
      yield* Effect.promise(() => lost.start())
    }).pipe(Effect.scoped, Effect.provide(OutboxDatabase)), 120_000)
})
