import { CreatePatRequest, MemberRemoved, PublicApi } from "@portfolio/domain"
import { UnitOfWork } from "@portfolio/platform/sql"
import { PatRequestRepository } from "../../src/ports/PatRequestRepository.js"
import { PatRepository } from "../../src/ports/PatRepository.js"
import { describe, expect, layer } from "@effect/vitest"
import { Context, DateTime, Effect, Layer, Option, References, Result } from "effect"
import { randomUUID } from "node:crypto"
import { PartnerTokensJoseWith } from "../../src/adapters/jose/PartnerTokensJose.js"
import { PatCacheMemoryWith } from "../../src/adapters/memory/PatCacheMemory.js"
import { ScimTokenCacheMemory } from "../../src/adapters/memory/ScimTokenCacheMemory.js"
import type { ScimTokenRepository } from "../../src/ports/ScimTokenRepository.js"
import { RateLimitStoreMemory } from "../../src/adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { RecentlyValidTokensMemory } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemory } from "../../src/adapters/memory/rate-limit/SpentAddressesMemory.js"
import { consumeMemberRemoved, watchMemberRemoved } from "../../src/adapters/nats/MemberRemovedConsumer.js"
import { hashPat } from "../../src/domain/Pat.js"
import { allowListOf } from "../../src/domain/AllowList.js"
import { admitRequest } from "../../src/usecases/AdmitRequest.js"
import { createPat } from "../../src/usecases/ManagePats.js"
import { memberRemovedPublisher, nats } from "../support/MemberRemovedPublisher.js"
import { TestOperatorCall } from "../support/OperatorCall.js"
import { GatewayStoresPgFresh } from "../support/PatRepositories.js"
import { TestSigningKey } from "../support/SigningKeys.js"
import { testConfigLayer } from "../support/testConfig.js"

/** The deployment's durable, shared by both replicas as in production. */
const durable = `gateway-test-${randomUUID()}`
const functions = allowListOf(PublicApi).match("GET", "/api/v1/referentiel/functions")
const tenantId = randomUUID()

class Publisher extends Context.Service<Publisher>()("test/ReplicasPublisher", { make: memberRemovedPublisher(durable) }) {
  static readonly layer = Layer.effect(Publisher, Publisher.make)
}

const removed = (userSub: string) =>
  Effect.flatMap(Effect.zip(Publisher, DateTime.now), ([publisher, occurredAt]) =>
    publisher.publish(MemberRemoved.make({ id: randomUUID(), type: "member.removed", occurredAt, tenantId, userSub })))

const SharedLive = Layer.mergeAll(GatewayStoresPgFresh("it_gw_replicas"), Publisher.layer).pipe(
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
)

/**
 * One gateway process: its own cache, windows and listeners (the shared durable and its own
 * watch), on the shared database. Its cache keeps a verification for a minute rather than a
 * second: published at once here, a removal would otherwise be outlived by no cache entry, whereas
 * in production it reaches the gateway after the relay's lag. The test then shows eviction, not expiry.
 */
const ReplicaOwnLive = Layer.mergeAll(
  PatCacheMemoryWith({ ttlMs: 60_000, maxEntries: 100 }),
  ScimTokenCacheMemory,
  RateLimitStoreMemory,
  SpentAddressesMemory,
  RecentlyValidTokensMemory,
  PartnerTokensJoseWith([TestSigningKey])
).pipe(Layer.provideMerge(testConfigLayer({ rateLimit: { windowMs: 60_000, perToken: 10_000, perPartner: 600, perScimToken: 600, perAnonymousIp: 10_000 } })))

const replica = Effect.gen(function*() {
  const own = yield* Layer.build(ReplicaOwnLive)
  const context = Context.merge(yield* Effect.context<PatRepository | PatRequestRepository | ScimTokenRepository | UnitOfWork>(), own)
  const run = <A, E>(
    effect: Effect.Effect<A, E, PatRepository | PatRequestRepository | ScimTokenRepository | UnitOfWork | Layer.Success<typeof ReplicaOwnLive>>
  ) =>
    Effect.provide(effect, context).pipe(Effect.provideService(References.MinimumLogLevel, "None"))
  yield* Effect.forkScoped(run(consumeMemberRemoved({ nats, durable })))
  yield* Effect.forkScoped(run(watchMemberRemoved({ nats })))
  /** "admitted", or the tag of the refusal. */
  return (token: string) =>
    run(admitRequest({ method: "GET", path: "/api/v1/referentiel/functions", route: functions, authorization: `Bearer ${token}`, clientIp: "192.0.2.1" }))
      .pipe(Effect.map((verdict) => Result.match(verdict.outcome, { onFailure: (error) => error._tag, onSuccess: () => "admitted" })))
}).pipe(Effect.provide(Layer.succeed(References.MinimumLogLevel, "None")))

const issue = (userSub: string) =>
  createPat(new CreatePatRequest({ tenantId, userSub, email: `${userSub}@example.com`, role: "viewer", scope: "read", days: 30 }), TestOperatorCall)

/** Calls both replicas until both refuse, for at most `giveUpMs`; answers how long that took and what they said last. */
const untilBothRefuse = <E, R>(replicas: ReadonlyArray<(token: string) => Effect.Effect<string, E, R>>, token: string, startedAtMs: number, giveUpMs: number) =>
  Effect.gen(function*() {
    for (;;) {
      const answers = yield* Effect.forEach(replicas, (admit) => admit(token))
      const elapsedMs = Date.now() - startedAtMs
      if (answers.every((answer) => answer !== "admitted") || elapsedMs > giveUpMs) return { elapsedMs, answers }
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
  })

describe("member.removed with two gateway replicas (real PostgreSQL and JetStream)", () => {
  layer(SharedLive, { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("cuts the removed member's cached tokens on every replica within one second of the event", () =>
      Effect.gen(function*() {
        const replicas = [yield* replica, yield* replica]
        const { durableReady } = yield* Publisher
        yield* durableReady

        // A first removal, untimed, shows both replicas' watches subscribed.
        const warmUp = yield* issue("auth0|warm-up")
        expect(yield* Effect.forEach(replicas, (admit) => admit(warmUp.token))).toEqual(["admitted", "admitted"])
        yield* removed("auth0|warm-up")
        yield* untilBothRefuse(replicas, warmUp.token, Date.now(), 10_000)

        const leaver = yield* issue("auth0|leaver")
        const colleague = yield* issue("auth0|stays")
        for (const token of [leaver.token, colleague.token]) {
          expect(yield* Effect.forEach(replicas, (admit) => admit(token))).toEqual(["admitted", "admitted"])
        }
        const publishedAtMs = Date.now()
        yield* removed("auth0|leaver")
        const cut = yield* untilBothRefuse(replicas, leaver.token, publishedAtMs, 5_000)
        expect(cut.answers).toEqual(["Unauthenticated", "Unauthenticated"])
        expect(cut.elapsedMs).toBeLessThan(1_000)

        expect(yield* Effect.forEach(replicas, (admit) => admit(colleague.token))).toEqual(["admitted", "admitted"])
        const stored = yield* Effect.flatMap(PatRepository, (store) => store.findByHash(hashPat(leaver.token)))
        expect(Option.getOrThrow(stored).revokedAt).not.toBeNull()
      }).pipe(Effect.scoped))
  })
})
