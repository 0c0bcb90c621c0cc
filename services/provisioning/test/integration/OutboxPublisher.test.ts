import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Layer, Redacted } from "effect"
import { connect, type Msg } from "nats"
import { NatsConfig } from "@portfolio/platform"
import { JetStreamPublisherLive as JetStreamPublisherOf } from "../../src/adapters/nats/JetStreamPublisher.js"
import { OutboxPublisher, publishPendingEvents } from "../../src/adapters/postgres/OutboxPublisher.js"
import { EventPublisher, PublishFailed } from "../../src/ports/EventPublisher.js"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation } from "../../src/usecases/Invitations.js"
import { removeMember } from "../../src/usecases/Members.js"
import { invite, lastMailTo, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"

const JetStreamPublisherLive = JetStreamPublisherOf.pipe(Layer.provide(NatsConfig.layer))
const subject = "events.provisioning.member.removed"

/** Every message published on the subject while the scope lives, keyed by its JetStream message id. */
const listen = Effect.gen(function*() {
  const nc = yield* Effect.acquireRelease(
    Effect.promise(() => connect({ servers: "nats://127.0.0.1:4222" })),
    (c) => Effect.promise(() => c.close())
  )
  const received = new Map<string, Msg>()
  const waiters = new Map<string, Deferred.Deferred<Msg>>()
  nc.subscribe(subject, {
    callback: (_error, msg) => {
      const id = msg.headers?.get("Nats-Msg-Id") ?? ""
      received.set(id, msg)
      const waiter = waiters.get(id)
      if (waiter !== undefined) Deferred.unsafeDone(waiter, Effect.succeed(msg))
    }
  })
  yield* Effect.promise(() => nc.flush())
  return {
    next: (id: string) =>
      Effect.gen(function*() {
        const already = received.get(id)
        if (already !== undefined) return already
        const waiter = yield* Deferred.make<Msg>()
        waiters.set(id, waiter)
        return yield* Deferred.await(waiter)
      })
  }
})

/** A member joins through an invitation and is removed; returns the id of the member.removed event. */
const joinAndRemove = (slug: string) =>
  Effect.gen(function*() {
    const { caller, tenant } = yield* tenantWithAdmin(slug)
    yield* createInvitation(caller, invite(`leaver@${slug}.test`))
    const sql = yield* SqlClient.SqlClient
    const member = yield* acceptInvitation(tokenOf(yield* lastMailTo(`leaver@${slug}.test`)), Redacted.make("a very good password"))
    yield* removeMember(caller, member.userSub)
    const [event] = yield* sql<{ id: string }>`SELECT id FROM provisioning.outbox WHERE payload->>'userSub' = ${member.userSub}`
    return { eventId: event!.id, tenantId: tenant.id, userSub: member.userSub }
  })

const unpublished = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM provisioning.outbox WHERE published_at IS NULL`.pipe(Effect.map((rows) => rows[0]!.n)))

layer(PgAdaptersLayer(), { timeout: 60_000, excludeTestServices: true })("outbox publisher to JetStream", (it) => {
  it.scoped("publishes member.removed once, with the event id as the message id, and marks it published", () =>
    Effect.gen(function*() {
      const bus = yield* listen
      const removed = yield* joinAndRemove("relay-once")
      expect(yield* unpublished).toBe(1)
      expect(yield* publishPendingEvents(100).pipe(Effect.provide(JetStreamPublisherLive))).toBe(1)
      const msg = yield* bus.next(removed.eventId).pipe(Effect.timeout("5 seconds"))
      expect(msg.subject).toBe(subject)
      expect(msg.json()).toEqual({
        id: removed.eventId,
        type: "member.removed",
        occurredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        tenantId: removed.tenantId,
        userSub: removed.userSub
      })
      expect(yield* unpublished).toBe(0)
      expect(yield* publishPendingEvents(100).pipe(Effect.provide(JetStreamPublisherLive))).toBe(0)
    }))

  it.scoped("keeps the event when the broker refuses it, and publishes it on a later pass", () =>
    Effect.gen(function*() {
      const removed = yield* joinAndRemove("relay-retry")
      const down = Layer.succeed(EventPublisher, { publish: () => Effect.fail(new PublishFailed({ cause: "broker unreachable" })) })
      expect(yield* publishPendingEvents(100).pipe(Effect.provide(down))).toBe(0)
      expect(yield* unpublished).toBe(1)
      const bus = yield* listen
      expect(yield* publishPendingEvents(100).pipe(Effect.provide(JetStreamPublisherLive))).toBe(1)
      expect((yield* bus.next(removed.eventId).pipe(Effect.timeout("5 seconds"))).json()).toMatchObject({ userSub: removed.userSub })
    }))

  it.scoped("the running publisher delivers a removal to the bus by itself", () =>
    Effect.gen(function*() {
      const bus = yield* listen
      yield* Layer.build(OutboxPublisher(JetStreamPublisherLive))
      const removed = yield* joinAndRemove("relay-live")
      const msg = yield* bus.next(removed.eventId).pipe(Effect.timeout("10 seconds"))
      expect(msg.json()).toMatchObject({ tenantId: removed.tenantId, userSub: removed.userSub })
    }))
})
