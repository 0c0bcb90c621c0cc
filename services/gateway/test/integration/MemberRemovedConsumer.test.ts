import { CreatePatRequest, MemberRemoved } from "@portfolio/domain"
import { describe, expect, layer } from "@effect/vitest"
import { Context, DateTime, Effect, Layer, Option, References } from "effect"
import { randomUUID } from "node:crypto"
import { consumeMemberRemoved } from "../../src/adapters/nats/MemberRemovedConsumer.js"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { createPat } from "../../src/usecases/ManagePats.js"
import { memberRemovedPublisher, nats } from "../support/MemberRemovedPublisher.js"
import { PatRepositoryMemory } from "../support/PatRepositoryMemory.js"
import { TestOperatorCall } from "../support/OperatorCall.js"
import { GatewayStoresMemory } from "../support/UnitOfWorkMemory.js"

const durable = `gateway-test-${randomUUID()}`

class Publisher extends Context.Service<Publisher>()("test/Publisher", { make: memberRemovedPublisher(durable) }) {
  static readonly layer = Layer.effect(Publisher, Publisher.make)
}

const tenantId = randomUUID()
const otherTenant = randomUUID()

const issue = (tenant: string, userSub: string) =>
  createPat(new CreatePatRequest({ tenantId: tenant, userSub, email: `${userSub}@example.com`, role: "viewer", scope: "read", days: 30 }), TestOperatorCall)

const revokedAt = (id: string) =>
  Effect.flatMap(PatRepositoryMemory, (m) => Effect.map(m.get(id), (r) => Option.getOrThrow(r).revokedAt))

const TestLive = Layer.mergeAll(GatewayStoresMemory, PatCacheMemory, Publisher.layer).pipe(
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
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

        yield* Effect.forkScoped(consumeMemberRemoved({ nats, durable }))
        const { durableReady, publish } = yield* Publisher
        yield* durableReady
        yield* publish("not json at all")
        yield* publish(MemberRemoved.make({ id: randomUUID(), type: "member.removed", occurredAt, tenantId, userSub: "auth0|leaver" }))

        while ((yield* revokedAt(removed.id)) === null) yield* Effect.sleep("20 millis")
        expect(yield* revokedAt(sameUserElsewhere.id)).toBeNull()
        expect(yield* revokedAt(colleague.id)).toBeNull()
        expect(yield* revokedAt(issuedAfter.id)).toBeNull()
      }).pipe(Effect.scoped))
  })
})
