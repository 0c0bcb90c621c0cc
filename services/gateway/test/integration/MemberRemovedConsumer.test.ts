import { CreatePatRequest } from "@portfolio/domain"
import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain/events/MemberRemoved"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Logger, LogLevel, Option, Schema } from "effect"
import { connect } from "nats"
import { randomUUID } from "node:crypto"
import { consumeMemberRemoved } from "../../src/adapters/nats/MemberRemovedConsumer.js"
import { PatCacheMemoryLive } from "../../src/adapters/memory/PatCacheMemory.js"
import { createPat } from "../../src/usecases/ManagePats.js"
import { MemoryPatStore } from "../support/MemoryPatStore.js"

const servers = "nats://127.0.0.1:4222"
const durable = `gateway-test-${randomUUID()}`

/** A publisher standing for provisioning's relay; it also removes the test's durable consumer afterwards. */
class Publisher extends Effect.Service<Publisher>()("test/Publisher", {
  scoped: Effect.gen(function*() {
    const nc = yield* Effect.acquireRelease(
      Effect.promise(() => connect({ servers })),
      (c) => Effect.promise(async () => {
        const jsm = await c.jetstreamManager()
        const stream = await jsm.streams.find(MemberRemovedSubject).catch(() => undefined)
        if (stream !== undefined) await jsm.consumers.delete(stream, durable).catch(() => undefined)
        await c.drain()
      })
    )
    const publish = (event: MemberRemoved | string) => {
      const payload = typeof event === "string" ? event : JSON.stringify(Schema.encodeSync(MemberRemoved)(event))
      return Effect.promise(() => nc.jetstream().publish(MemberRemovedSubject, new TextEncoder().encode(payload), { msgID: randomUUID() }))
    }
    /** Resolves once the listener has set up its durable consumer (and so the stream). */
    const listenerReady = Effect.promise(async () => {
      const jsm = await nc.jetstreamManager()
      for (;;) {
        const stream = await jsm.streams.find(MemberRemovedSubject).catch(() => undefined)
        if (stream !== undefined && (await jsm.consumers.info(stream, durable).catch(() => undefined)) !== undefined) return
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })
    return { publish, listenerReady }
  })
}) {}

const tenantId = randomUUID()
const otherTenant = randomUUID()

const issue = (tenant: string, userSub: string) =>
  createPat(new CreatePatRequest({ tenantId: tenant, userSub, email: `${userSub}@example.com`, role: "viewer", scope: "read", days: 30 }))

const revokedAt = (id: string) =>
  Effect.flatMap(MemoryPatStore, (m) => Effect.map(m.get(id), (r) => Option.getOrThrow(r).revokedAt))

const TestLive = Layer.mergeAll(MemoryPatStore.layer, PatCacheMemoryLive, Publisher.Default).pipe(
  Layer.provide(Logger.minimumLogLevel(LogLevel.None))
)

describe("member.removed listener (real JetStream)", () => {
  layer(TestLive, { excludeTestServices: true, timeout: 30_000 })((it) => {
    it.effect("revokes the removed member's tokens in that tenant only, and only those issued before the removal", () =>
      Effect.gen(function*() {
        const removed = yield* issue(tenantId, "auth0|leaver")
        const sameUserElsewhere = yield* issue(otherTenant, "auth0|leaver")
        const colleague = yield* issue(tenantId, "auth0|stays")
        const occurredAt = yield* DateTime.now
        yield* Effect.sleep("5 millis")
        const issuedAfter = yield* issue(tenantId, "auth0|leaver")

        yield* Effect.forkScoped(consumeMemberRemoved({ servers, durable }))
        const { listenerReady, publish } = yield* Publisher
        yield* listenerReady
        yield* publish("not json at all")
        yield* publish(MemberRemoved.make({ id: randomUUID(), type: "member.removed", occurredAt, tenantId, userSub: "auth0|leaver" }))

        while ((yield* revokedAt(removed.id)) === null) yield* Effect.sleep("20 millis")
        expect(yield* revokedAt(sameUserElsewhere.id)).toBeNull()
        expect(yield* revokedAt(colleague.id)).toBeNull()
        expect(yield* revokedAt(issuedAfter.id)).toBeNull()
      }).pipe(Effect.scoped))
  })
})
