import { describe, expect, layer } from "@effect/vitest"
import { MemberRemovedSubject, SubscriptionDisabled, SubscriptionDisabledSubject } from "@portfolio/domain"
import { natsConnection, natsSettingsConfig } from "@portfolio/platform/nats"
import { useNatsServer, useTempDir } from "@portfolio/platform/testing"
import { ConfigProvider, DateTime, Effect, Layer, Option, References, Schema } from "effect"
import { connect } from "@nats-io/transport-node"
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { randomBytes, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { consumeSubscriptionDisabled, subscriptionDisabledDurableConfig } from "../../src/adapters/nats/SubscriptionDisabledConsumer.js"
import { MailArchive } from "../../src/ports/MailArchive.js"
import { tenantWithAdmin } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"

// The permissions docs/security.md#nats gives provisioning, on a real server: its durable consumer
// of subscription.disabled works with them, and they reach no other durable. The block is read from
// the page, so that the page cannot drift from what works; a publisher of the test's own stands for
// the dispatcher, whose user the block does not hold.
const documentedPermissions = () => {
  const page = readFileSync(new URL("../../../../docs/security.md", import.meta.url), "utf8")
  const block = /```conf\n([\s\S]*?)```/.exec(page.slice(page.indexOf("## NATS")))?.[1]
  if (block === undefined) throw new Error("no ```conf block under ## NATS in docs/security.md")
  return block
}

const word = () => `pw${randomBytes(12).toString("hex")}`
const passwords = { gateway: word(), provisioning: word(), referential: word(), publisher: word() }
const databaseUrl = `postgres://test@127.0.0.1:5432/nats_permissions_${randomBytes(4).toString("hex")}`
const durable = Effect.runSync(subscriptionDisabledDurableConfig.parse(ConfigProvider.fromUnknown({ DATABASE_URL: databaseUrl })))
const gatewayDurable = `gateway-member-removed-${randomBytes(8).toString("hex")}`

const dir = useTempDir()
const server = useNatsServer(
  dir,
  "provisioning-permissions",
  () => {
    const block = documentedPermissions()
      .replaceAll("provisioning-subscription-disabled-<16 hex>", durable)
      .replaceAll("gateway-member-removed-<16 hex>", gatewayDurable)
    const publisher = `{ user: test-publisher, password: ${passwords.publisher}, permissions: { publish: { allow: [">"] }, subscribe: { allow: [">"] } } }`
    return `jetstream { store_dir: "${join(dir, "jetstream")}" }\n${block.replace("users: [", `users: [\n      ${publisher}`)}`
  },
  {
    PORTFOLIO_GATEWAY_NATS_PASSWORD: passwords.gateway,
    PORTFOLIO_PROVISIONING_NATS_PASSWORD: passwords.provisioning,
    PORTFOLIO_REFERENTIAL_NATS_PASSWORD: passwords.referential
  }
)

const provisioningNats = Effect.suspend(() =>
  natsSettingsConfig.parse(
    ConfigProvider.fromUnknown({ NATS_URL: server.url(), NATS_USER: "portfolio-provisioning", NATS_PASSWORD: passwords.provisioning })
  )
).pipe(Effect.orDie)

/** The test's publisher, standing for the dispatcher's relay (and the gateway, for its durable). */
const publisherConnection = Effect.acquireRelease(
  Effect.promise(() => connect({ servers: server.url(), user: "test-publisher", pass: passwords.publisher })),
  // Every publication was acknowledged: nothing to flush, and a drain can wait on the server.
  (nc) => Effect.promise(() => nc.close())
)

/** Whether the server refuses the attempt: its permission error, or no answer to a JetStream request. */
const refused = (attempt: Effect.Effect<unknown, unknown>) =>
  attempt.pipe(Effect.timeout("3 seconds"), Effect.match({ onFailure: () => true, onSuccess: () => false }))

const TestLive = PgAdaptersLayer().pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "None")))

describe("the NATS permissions of docs/security.md, for provisioning", () => {
  layer(TestLive, { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("let provisioning's durable consumer hear subscription.disabled and mail the tenant's admin", () =>
      Effect.gen(function*() {
        const { tenant } = yield* tenantWithAdmin("acme", "admin@acme.test")
        yield* Effect.forkScoped(consumeSubscriptionDisabled({ nats: yield* provisioningNats, durable }))
        const publisher = yield* publisherConnection
        const event = SubscriptionDisabled.make({
          id: randomUUID(),
          type: "webhook.subscription.disabled",
          occurredAt: yield* DateTime.now,
          tenantId: tenant.id,
          subscriptionId: randomUUID(),
          url: "https://hooks.acme.example/in",
          consecutiveFailures: 10,
          lastError: "HTTP 502"
        })
        const payload = JSON.stringify(Schema.encodeSync(SubscriptionDisabled)(event))
        // The consumer creates the stream if it is the first; the publisher waits for it.
        const jsm = yield* Effect.promise(() => jetstreamManager(publisher))
        while ((yield* Effect.promise(() => jsm.consumers.info("EVENTS", durable).catch(() => undefined))) === undefined) {
          yield* Effect.sleep("25 millis")
        }
        yield* Effect.promise(() => jetstream(publisher).publish(SubscriptionDisabledSubject, new TextEncoder().encode(payload), { msgID: event.id }))
        // The admin's welcome link (createTenant) is the archive's first mail; the notice comes after it.
        const archive = yield* MailArchive
        const notices = Effect.map(archive.list(Option.none(), 10), (mail) => mail.filter((m) => m.subject.startsWith("Webhook to ")))
        for (let i = 0; i < 400 && (yield* notices).length === 0; i++) yield* Effect.sleep("25 millis")
        expect((yield* notices).map((m) => m.to)).toEqual(["admin@acme.test"])
      }).pipe(Effect.scoped))

    it.effect("keep provisioning from the gateway's durable and from forging the dispatcher's events", () =>
      Effect.gen(function*() {
        const publisher = yield* publisherConnection
        const jsm = yield* Effect.promise(() => jetstreamManager(publisher))
        yield* Effect.promise(() =>
          jsm.consumers.add("EVENTS", { durable_name: gatewayDurable, filter_subject: MemberRemovedSubject, ack_policy: AckPolicy.Explicit }))
        const provisioning = yield* natsConnection(yield* provisioningNats, { name: "provisioning", timeout: 3_000, close: "close" })
        const stolen = Effect.tryPromise(async () => {
          const consumer = await jetstream(provisioning).consumers.get("EVENTS", gatewayDurable)
          return consumer.next({ expires: 1_000 })
        })
        expect(yield* refused(stolen)).toBe(true)
        expect(yield* refused(Effect.tryPromise(() => jetstream(provisioning).publish(SubscriptionDisabledSubject, "{}")))).toBe(true)
      }).pipe(Effect.scoped))
  })
})
