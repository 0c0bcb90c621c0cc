import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, type Duration, Effect, Layer, Schedule } from "effect"
import { connect, type Msg } from "@nats-io/transport-node"
import { randomUUID } from "node:crypto"
import { SchemaMigrationsLive } from "../../src/sql/Migrations.js"
import { NatsSettings, plainNats } from "../../src/nats/Nats.js"
import {
  appendToOutbox,
  createOutboxTable,
  EventPublisher,
  EventPublisherJs,
  OutboxRelayLive,
  publishPendingEvents,
  PublishFailed
} from "../../src/nats/Outbox.js"
import { FreshPgLive } from "../../testing/FreshDatabase.js"

// A service's schema of its own, migrated as a service migrates its outbox.
const schema = "relayed"
const subject = "events.relayed.thing.happened"
const otherSubject = "events.relayed.thing.marked"
const Database = SchemaMigrationsLive(schema, { "0001_outbox": createOutboxTable(schema) }).pipe(Layer.provideMerge(FreshPgLive("it_outbox", 4)))

const natsAt = (servers: string) => EventPublisherJs("outbox-test").pipe(Layer.provide(Layer.succeed(NatsSettings, plainNats(servers))))
const JetStream = natsAt("nats://127.0.0.1:4222")
// Nothing listens on port 1: the connection is refused, as when NATS is down.
const Unreachable = natsAt("nats://127.0.0.1:1")

/** Every message published on the test's subjects while the scope lives, keyed by its JetStream message id. */
const listen = Effect.gen(function*() {
  const nc = yield* Effect.acquireRelease(
    Effect.promise(() => connect({ servers: "nats://127.0.0.1:4222" })),
    (c) => Effect.promise(() => c.close())
  )
  const received = new Map<string, Msg>()
  const waiters = new Map<string, Deferred.Deferred<Msg>>()
  nc.subscribe("events.relayed.>", {
    callback: (_error, msg) => {
      const id = msg.headers?.get("Nats-Msg-Id") ?? ""
      received.set(id, msg)
      const waiter = waiters.get(id)
      if (waiter !== undefined) Deferred.doneUnsafe(waiter, Effect.succeed(msg))
    }
  })
  yield* Effect.promise(() => nc.flush())
  return {
    next: (id: string, within: Duration.Input = "10 seconds") =>
      Effect.gen(function*() {
        const already = received.get(id)
        if (already !== undefined) return already
        const waiter = yield* Deferred.make<Msg>()
        waiters.set(id, waiter)
        return yield* Deferred.await(waiter).pipe(Effect.timeout(within))
      })
  }
})

/** Appends one event in a transaction of its own, inside a span; returns the event's id and that span. */
const write = (label: string, on = subject) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    const span = yield* sql.withTransaction(
      Effect.andThen(appendToOutbox(schema, [{ id, subject: on, payload: { id, label } }]), Effect.orDie(Effect.currentSpan))
    ).pipe(Effect.withSpan("write"))
    return { id, span }
  })

/** An event written as appendToOutbox writes it, but without the notification of its commit. */
const writeSilently = (label: string, on = subject) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = randomUUID()
    yield* sql`INSERT INTO relayed.outbox (id, subject, payload, created_at) VALUES (${id}, ${on}, ${JSON.stringify({ id, label })}::jsonb, now())`
    return id
  })

/**
 * A relay that has made its first pass (the marker it published shows it) and listens: from then on
 * only a notification, its backstop or the retry of a refusal wakes it. Its listening starts beside
 * its first pass, not before it, and a notification sent before then is heard at the backstop only:
 * a notified write published within a second shows it listens (asked again until one is). The
 * markers' subject is one no test's publisher refuses.
 */
const idleRelay = (bus: Effect.Success<typeof listen>, publisher: Layer.Layer<EventPublisher, unknown>, backstop: Duration.Input) =>
  Effect.gen(function*() {
    const marker = yield* writeSilently("before", otherSubject)
    yield* Layer.build(OutboxRelayLive(schema, publisher, backstop))
    yield* bus.next(marker)
    yield* Effect.flatMap(write("listening?", otherSubject), ({ id }) => bus.next(id, "1 second")).pipe(Effect.retry({ times: 30 }))
  })

const unpublished = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM relayed.outbox WHERE published_at IS NULL`.pipe(Effect.map((rows) => rows[0]!.n)))

layer(Database, { timeout: 60_000, excludeTestServices: true })("outbox relay to JetStream", (it) => {
  it.effect("stores the writer's trace context and writes nothing for a rolled-back transaction", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { id, span } = yield* write("kept")
      const [row] = yield* sql<{ headers: unknown }>`SELECT headers FROM relayed.outbox WHERE id = ${id}`
      expect(row!.headers).toEqual({ traceparent: `00-${span.traceId}-${span.spanId}-01` })
      const dropped = randomUUID()
      yield* Effect.flip(sql.withTransaction(Effect.andThen(appendToOutbox(schema, [{ id: dropped, subject, payload: {} }]), Effect.fail("refused"))))
      expect(yield* sql`SELECT id FROM relayed.outbox WHERE id = ${dropped}`).toEqual([])
      yield* publishPendingEvents(schema, 100).pipe(Effect.provide(JetStream))
    }))

  it.effect("publishes once, with the event id as message id and the trace context below the writer's, and marks it published", () =>
    Effect.gen(function*() {
      const bus = yield* listen
      const { id, span } = yield* write("once")
      expect(yield* unpublished).toBe(1)
      expect(yield* publishPendingEvents(schema, 100).pipe(Effect.provide(JetStream))).toEqual({ published: 1, kept: 0 })
      const msg = yield* bus.next(id)
      expect(msg.subject).toBe(subject)
      expect(msg.json()).toEqual({ id, label: "once" })
      // The producer span: same trace, a span of its own under the writer's.
      const [version, traceId, spanId, flags] = (msg.headers?.get("traceparent") ?? "").split("-")
      expect({ version, traceId, flags }).toEqual({ version: "00", traceId: span.traceId, flags: "01" })
      expect(spanId).toMatch(/^[0-9a-f]{16}$/)
      expect(spanId).not.toBe(span.spanId)
      expect(yield* unpublished).toBe(0)
      expect(yield* publishPendingEvents(schema, 100).pipe(Effect.provide(JetStream))).toEqual({ published: 0, kept: 0 })
    }))

  it.effect("keeps the rows while the broker refuses them or NATS is unreachable, and publishes them later", () =>
    Effect.gen(function*() {
      const first = yield* write("first")
      const second = yield* write("second")
      const down = Layer.succeed(EventPublisher, { publish: () => Effect.fail(new PublishFailed({ cause: "broker unreachable" })) })
      expect(yield* publishPendingEvents(schema, 100).pipe(Effect.provide(down))).toEqual({ published: 0, kept: 2 })
      expect(yield* Effect.result(publishPendingEvents(schema, 100).pipe(Effect.provide(Unreachable)))).toMatchObject({ _tag: "Failure" })
      expect(yield* unpublished).toBe(2)
      const bus = yield* listen
      expect(yield* publishPendingEvents(schema, 100).pipe(Effect.provide(JetStream))).toEqual({ published: 2, kept: 0 })
      expect((yield* bus.next(first.id)).json()).toEqual({ id: first.id, label: "first" })
      expect((yield* bus.next(second.id)).json()).toEqual({ id: second.id, label: "second" })
    }))

  it.effect("the running relay publishes by itself", () =>
    Effect.gen(function*() {
      const bus = yield* listen
      yield* Layer.build(OutboxRelayLive(schema, JetStream))
      const { id } = yield* write("live")
      expect((yield* bus.next(id)).json()).toEqual({ id, label: "live" })
    }))

  it.effect("is woken by the commit's notification, without waiting for its backstop", () =>
    Effect.gen(function*() {
      const bus = yield* listen
      yield* idleRelay(bus, JetStream, "1 hour")
      const { id } = yield* write("notified")
      expect((yield* bus.next(id)).json()).toEqual({ id, label: "notified" })
    }))

  it.effect("publishes at its backstop what came with no notification", () =>
    Effect.gen(function*() {
      const bus = yield* listen
      yield* idleRelay(bus, JetStream, "200 millis")
      const id = yield* writeSilently("silent")
      expect((yield* bus.next(id)).json()).toEqual({ id, label: "silent" })
    }))

  it.effect("offers again, a second later, what the broker refused, without waiting for its backstop", () =>
    Effect.gen(function*() {
      const bus = yield* listen
      let refusals = 1
      const refusingOnce = Layer.effect(
        EventPublisher,
        Effect.map(EventPublisher, (broker) => ({
          ...broker,
          publish: (...args: Parameters<typeof broker.publish>) =>
            args[0] === subject && refusals-- > 0 ? Effect.fail(new PublishFailed({ cause: "refused once" })) : broker.publish(...args)
        }))
      ).pipe(Layer.provide(JetStream))
      yield* idleRelay(bus, refusingOnce, "1 hour")
      const { id } = yield* write("refused once")
      expect((yield* bus.next(id)).json()).toEqual({ id, label: "refused once" })
      expect(refusals).toBeLessThan(0)
    }))

  it.effect("hears notifications again once its listening connection is cut, as by a restart of PostgreSQL", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bus = yield* listen
      // No backstop within the test: only a notification (or the wake-up of listening again) publishes.
      yield* idleRelay(bus, JetStream, "1 hour")
      const listeners = sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN %'`
      const [cut] = yield* listeners
      expect(cut).toBeDefined()
      yield* sql`SELECT pg_terminate_backend(${cut!.pid})`
      // Listening again on a connection of its own, then woken by each commit as before.
      yield* listeners.pipe(
        Effect.filterOrFail((rows) => rows.length === 1 && rows[0]!.pid !== cut!.pid, () => "not listening again yet"),
        Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 100 })
      )
      const { id } = yield* write("heard again")
      expect((yield* bus.next(id, "5 seconds")).json()).toEqual({ id, label: "heard again" })
    }))

  // A pass can die rather than fail: a transaction whose connection PostgreSQL dropped dies in its
  // ROLLBACK. The relay must start again all the same, not end after logging that it restarts.
  it.effect("starts again after a pass that died, and publishes what was written", () =>
    Effect.gen(function*() {
      const bus = yield* listen
      let deaths = 1
      const dyingOnce = Layer.effect(
        EventPublisher,
        Effect.map(EventPublisher, (broker) => ({
          ...broker,
          publish: (...args: Parameters<typeof broker.publish>) =>
            args[0] === subject && deaths-- > 0 ? Effect.die(new Error("the connection was lost in the rollback")) : broker.publish(...args)
        }))
      ).pipe(Layer.provide(JetStream))
      yield* idleRelay(bus, dyingOnce, "1 hour")
      const { id } = yield* write("after a death")
      expect((yield* bus.next(id)).json()).toEqual({ id, label: "after a death" })
      expect(deaths).toBeLessThan(0)
    }))
})
