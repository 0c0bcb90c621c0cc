import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { ApplicationCreatedSubject, CreatePatRequest, MemberRemoved, MemberRemovedSubject } from "@portfolio/domain"
import { describe, expect, layer } from "@effect/vitest"
import { ensureEventsStream, EventPublisher, EventPublisherJs, NatsSettings, natsConnection, natsSettingsConfig } from "@portfolio/platform/nats"
import { useNatsServer, useTempDir } from "@portfolio/platform/testing"
import { ConfigProvider, DateTime, Deferred, Effect, Exit, Fiber, Layer, Logger, Option, References, Schema } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { consumeMemberRemoved, memberRemovedDurableConfig, watchMemberRemoved } from "../../src/adapters/nats/MemberRemovedConsumer.js"
import { makeRateLimitStoreKv, type RateLimitStoreKvOptions } from "../../src/adapters/nats/rate-limit/RateLimitStoreKv.js"
import { createPat } from "../../src/usecases/ManagePats.js"
import { PatRepositoryMemory } from "../support/PatRepositoryMemory.js"
import { TestOperatorCall } from "../support/OperatorCall.js"
import { GatewayStoresMemory } from "../support/UnitOfWorkMemory.js"

// The permissions docs/security.md#nats gives each service, on a real server: the gateway works
// with them (bucket, durable consumer, watch), provisioning publishes, and neither writes what is
// the other's. The block is read from the page, so that the page cannot drift from what works.
const documentedPermissions = () => {
  const page = readFileSync(new URL("../../../../docs/security.md", import.meta.url), "utf8")
  const section = page.slice(page.indexOf("## NATS"))
  const block = /```conf\n([\s\S]*?)```/.exec(section)?.[1]
  if (block === undefined) throw new Error("no ```conf block under ## NATS in docs/security.md")
  return block
}

const dir = useTempDir()
// The server parses a variable's value as a configuration value: a password must read as a word, not a number.
const passwords = {
  gateway: `pw${randomBytes(12).toString("hex")}`,
  provisioning: `pw${randomBytes(12).toString("hex")}`,
  referential: `pw${randomBytes(12).toString("hex")}`
}
const databaseUrl = `postgres://test@127.0.0.1:5432/nats_permissions_${randomBytes(4).toString("hex")}`
const durable = Effect.runSync(Effect.provideService(memberRemovedDurableConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { DATABASE_URL: databaseUrl } })))
const server = useNatsServer(
  dir,
  "permissions",
  () => `jetstream { store_dir: "${join(dir, "jetstream")}" }\n${documentedPermissions().replaceAll("gateway-member-removed-<16 hex>", durable)}`,
  {
    PORTFOLIO_GATEWAY_NATS_PASSWORD: passwords.gateway,
    PORTFOLIO_PROVISIONING_NATS_PASSWORD: passwords.provisioning,
    PORTFOLIO_REFERENTIAL_NATS_PASSWORD: passwords.referential
  }
)

const settingsOf = (service: keyof typeof passwords) =>
  Effect.provideService(
    natsSettingsConfig,
    ConfigProvider.ConfigProvider,
    ConfigProvider.fromEnv({ env: { NATS_URL: server.url(), NATS_USER: `portfolio-${service}`, NATS_PASSWORD: passwords[service] } })
  ).pipe(Effect.orDie)

/** What provisioning's relay does for an event (EventPublisherJs): make sure of the stream, then publish with the id as message id. */
const publishAsProvisioning = (event: MemberRemoved) =>
  Effect.gen(function*() {
    const nc = yield* natsConnection(yield* settingsOf("provisioning"), { name: "provisioning", timeout: 3_000 })
    yield* Effect.promise(async () => ensureEventsStream(await jetstreamManager(nc), MemberRemovedSubject))
    const payload = new TextEncoder().encode(JSON.stringify(Schema.encodeSync(MemberRemoved)(event)))
    yield* Effect.promise(() => jetstream(nc).publish(MemberRemovedSubject, payload, { msgID: event.id }))
  }).pipe(Effect.scoped)

const tenantId = randomUUID()
/** A removal strictly after the tokens issued so far: only those created before `occurredAt` are revoked. */
const removal = (userSub: string) =>
  Effect.andThen(Effect.sleep("5 millis"), DateTime.now).pipe(
    Effect.map((occurredAt) => MemberRemoved.make({ id: randomUUID(), type: "member.removed", occurredAt, tenantId, userSub }))
  )
const issue = (userSub: string) =>
  createPat(new CreatePatRequest({ tenantId, userSub, email: `${userSub}@example.com`, role: "viewer", scope: "read", days: 30 }), TestOperatorCall)
const revoked = (id: string) => Effect.flatMap(PatRepositoryMemory, (m) => Effect.map(m.get(id), (r) => Option.getOrThrow(r).revokedAt !== null))
const untilRevoked = (id: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400 && !(yield* revoked(id)); i++) yield* Effect.sleep("25 millis")
    return yield* revoked(id)
  })

/** Whether the server refuses a write: its permission error, or no answer to a JetStream request. */
const refused = (attempt: Effect.Effect<unknown, unknown>) =>
  attempt.pipe(Effect.timeout("3 seconds"), Effect.match({ onFailure: () => true, onSuccess: () => false }))

const TestLive = Layer.mergeAll(GatewayStoresMemory, PatCacheMemory).pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "None")))

describe("the NATS permissions of docs/security.md", () => {
  layer(TestLive, { excludeTestServices: true, timeout: 30_000 })((it) => {
    it.effect("let the gateway count in the shared bucket, exactly", () =>
      Effect.gen(function*() {
        const nats = yield* settingsOf("gateway")
        const options: RateLimitStoreKvOptions = { nats, bucket: "gateway_rate_limits", keyPrefix: randomBytes(8).toString("hex"), windowMs: 60_000, timeout: "2 seconds" }
        const [a, b] = [yield* makeRateLimitStoreKv(options), yield* makeRateLimitStoreKv(options)]
        yield* Effect.all([a.connected, b.connected])
        expect(yield* a.hit("pat:p", 2, 60_000, 1_000)).toEqual({ allowed: true, limit: 2, remaining: 1, resetAtMs: 61_000 })
        expect(yield* b.hit("pat:p", 2, 60_000, 1_001)).toEqual({ allowed: true, limit: 2, remaining: 0, resetAtMs: 61_000 })
        expect((yield* a.hit("pat:p", 2, 60_000, 1_002)).allowed).toBe(false)
        expect((yield* a.condition).degraded).toBe(false)
      }).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "None")))

    it.effect("let provisioning publish member.removed, and the gateway's watch and durable consumer apply it", () =>
      Effect.gen(function*() {
        const nats = yield* settingsOf("gateway")
        const first = yield* issue("auth0|first")
        // The watch logs once its subscription is flushed to the server: an event published after cannot miss it.
        const watching = yield* Deferred.make<void>()
        const logger = Logger.make(({ message }) => {
          if (String(Array.isArray(message) ? message[0] : message).startsWith("watching member.removed")) Deferred.doneUnsafe(watching, Exit.void)
        })
        const watch = yield* Effect.forkScoped(
          watchMemberRemoved({ nats }).pipe(Effect.provide(Logger.layer([logger])), Effect.provideService(References.MinimumLogLevel, "Info"))
        )
        yield* Deferred.await(watching).pipe(Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail(new Error("the watch did not start")) }))
        yield* publishAsProvisioning(yield* removal("auth0|first"))
        expect(yield* untilRevoked(first.id)).toBe(true)
        yield* Fiber.interrupt(watch)

        const second = yield* issue("auth0|second")
        yield* Effect.forkScoped(consumeMemberRemoved({ nats, durable }))
        yield* publishAsProvisioning(yield* removal("auth0|second"))
        expect(yield* untilRevoked(second.id)).toBe(true)
      }).pipe(Effect.scoped))

    it.effect("let the referential's relay publish its application events", () =>
      Effect.gen(function*() {
        const publisher = yield* EventPublisher
        const id = randomUUID()
        yield* publisher.publish(ApplicationCreatedSubject, JSON.stringify({ id }), id, { traceparent: `00-${"1".repeat(32)}-${"2".repeat(16)}-01` })
      }).pipe(
        Effect.provide(EventPublisherJs("referential").pipe(Layer.provide(Layer.effect(NatsSettings, settingsOf("referential"))))),
        Effect.scoped
      ))

    it.effect("keep each service to its own subjects, and everyone else out", () =>
      Effect.gen(function*() {
        const gateway = yield* natsConnection(yield* settingsOf("gateway"), { name: "gateway", timeout: 3_000, close: "close" })
        const provisioning = yield* natsConnection(yield* settingsOf("provisioning"), { name: "provisioning", timeout: 3_000, close: "close" })
        const event = JSON.stringify(Schema.encodeSync(MemberRemoved)(yield* removal("auth0|forged")))
        expect(yield* refused(Effect.tryPromise(() => jetstream(gateway).publish(MemberRemovedSubject, event)))).toBe(true)
        expect(yield* refused(Effect.tryPromise(() => jetstream(provisioning).publish(`$KV.gateway_rate_limits.${durable}.x`, "reset")))).toBe(true)
        expect(yield* refused(Effect.tryPromise(async () => (await jetstreamManager(provisioning)).streams.delete("KV_gateway_rate_limits")))).toBe(true)
        expect(yield* refused(Effect.tryPromise(async () => (await jetstreamManager(gateway)).streams.purge("EVENTS")))).toBe(true)
        const referential = yield* natsConnection(yield* settingsOf("referential"), { name: "referential", timeout: 3_000, close: "close" })
        expect(yield* refused(Effect.tryPromise(() => jetstream(referential).publish(MemberRemovedSubject, event)))).toBe(true)
        const anonymous = ConfigProvider.fromEnv({ env: { NATS_URL: server.url() } })
        const stranger = Effect.flatMap(Effect.provideService(natsSettingsConfig, ConfigProvider.ConfigProvider, anonymous), (settings) => natsConnection(settings, { name: "stranger", timeout: 3_000 }))
        expect(yield* refused(Effect.scoped(stranger))).toBe(true)
      }).pipe(Effect.scoped))
  })
})
