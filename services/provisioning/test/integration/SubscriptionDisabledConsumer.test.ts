import { describe, expect, layer } from "@effect/vitest"
import { Member, SubscriptionDisabled, SubscriptionDisabledSubject } from "@portfolio/domain"
import { plainNats } from "@portfolio/platform/nats"
import { DateTime, Effect, Layer, Option, References, Schema } from "effect"
import { connect } from "@nats-io/transport-node"
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { randomUUID } from "node:crypto"
import { consumeSubscriptionDisabled } from "../../src/adapters/nats/SubscriptionDisabledConsumer.js"
import { MailArchive } from "../../src/ports/MailArchive.js"
import { MemberRepository } from "../../src/ports/MemberRepository.js"
import { tenantWithAdmin } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"

// The dispatcher's event on the real JetStream (the shared server on 4222), handled by provisioning
// on a fresh database with the local mailer, read back from its archive as an operator would.
const servers = "nats://127.0.0.1:4222"
const durable = `provisioning-test-${randomUUID()}`

/** Publishes as the dispatcher's relay would; removes the test's durable when the scope closes. */
const publisher = Effect.gen(function*() {
  const nc = yield* Effect.acquireRelease(
    Effect.promise(() => connect({ servers })),
    (c) =>
      Effect.promise(async () => {
        const jsm = await jetstreamManager(c)
        const stream = await jsm.streams.find(SubscriptionDisabledSubject).catch(() => undefined)
        if (stream !== undefined) await jsm.consumers.delete(stream, durable).catch(() => undefined)
        // Every publication was acknowledged: nothing to flush, and a drain can wait on the server.
        await c.close()
      })
  )
  const publish = (payload: string, msgID: string) =>
    Effect.promise(() => jetstream(nc).publish(SubscriptionDisabledSubject, new TextEncoder().encode(payload), { msgID }))
  /** Completes once the consumer exists, then once it has acknowledged everything up to `seq`. */
  const consumerInfo = Effect.promise(async () => {
    const jsm = await jetstreamManager(nc)
    const stream = await jsm.streams.find(SubscriptionDisabledSubject).catch(() => undefined)
    return stream === undefined ? undefined : jsm.consumers.info(stream, durable).catch(() => undefined)
  })
  const durableReady = Effect.gen(function*() {
    while ((yield* consumerInfo) === undefined) yield* Effect.sleep("20 millis")
  })
  const handledUpTo = (seq: number) =>
    Effect.gen(function*() {
      for (;;) {
        const info = yield* consumerInfo
        if (info !== undefined && info.delivered.stream_seq >= seq && info.num_pending === 0 && info.num_ack_pending === 0) return
        yield* Effect.sleep("25 millis")
      }
    })
  return { publish, durableReady, handledUpTo }
})

const encode = (event: SubscriptionDisabled) => JSON.stringify(Schema.encodeSync(SubscriptionDisabled)(event))

const disabledEvent = (tenantId: string) =>
  Effect.map(DateTime.now, (occurredAt) =>
    SubscriptionDisabled.make({
      id: randomUUID(),
      type: "webhook.subscription.disabled",
      occurredAt,
      tenantId,
      subscriptionId: randomUUID(),
      url: "https://hooks.acme.example/in",
      consecutiveFailures: 10,
      lastError: "connect ECONNREFUSED"
    }))

const addMember = (tenantId: string, userSub: string, userEmail: string, arbRole: "tenant-admin" | "viewer") =>
  Effect.flatMap(DateTime.now, (grantedAt) =>
    Effect.flatMap(MemberRepository, (members) =>
      members.insert({ tenantId, member: new Member({ userSub, userEmail, arbRole, source: "INVITATION", grantedAt }) })))

const archived = Effect.flatMap(MailArchive, (archive) => archive.list(Option.none(), 50))

const TestLive = PgAdaptersLayer().pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "None")))

describe("webhook.subscription.disabled listener (real JetStream and PostgreSQL)", () => {
  layer(TestLive, { excludeTestServices: true, timeout: 60_000 })((it) => {
    it.effect("mails each tenant-admin exactly once, even when the event comes twice", () =>
      Effect.gen(function*() {
        const { tenant } = yield* tenantWithAdmin("acme", "first-admin@acme.test")
        yield* addMember(tenant.id, "sub-second", "second-admin@acme.test", "tenant-admin")
        yield* addMember(tenant.id, "sub-viewer", "viewer@acme.test", "viewer")
        yield* tenantWithAdmin("globex", "admin@globex.test")
        // The two admins' welcome links (createTenant); the archive lists newest first.
        const welcomes = (yield* archived).length
        expect(welcomes).toBe(2)
        const notices = Effect.map(archived, (mail) => mail.slice(0, mail.length - welcomes))

        // The publisher first: its scope closes last, once the listener is interrupted, so that the
        // durable it removes is not re-created by a listener still running.
        const { durableReady, handledUpTo, publish } = yield* publisher
        yield* Effect.forkScoped(consumeSubscriptionDisabled({ nats: plainNats(servers), durable }))
        yield* durableReady
        const event = yield* disabledEvent(tenant.id)
        yield* publish("not json at all", randomUUID())
        yield* publish(encode(event), event.id)
        // The same event again under another message id: JetStream's own deduplication (same id,
        // within its window) would hide it; a relay retrying after that window would not.
        const again = yield* publish(encode(event), randomUUID())
        yield* handledUpTo(again.seq)

        const mail = yield* notices
        expect(mail.map((m) => m.to).sort()).toEqual(["first-admin@acme.test", "second-admin@acme.test"])
        expect(mail.every((m) => m.subject === "Webhook to hooks.acme.example disabled in acme after 10 failed deliveries")).toBe(true)
        expect(mail[0]!.text).toContain(`portfolio webhook enable ${event.subscriptionId}`)
        expect(mail[0]!.text).toContain("Last error: connect ECONNREFUSED")

        // Another disabling is another notice.
        const next = yield* disabledEvent(tenant.id)
        yield* handledUpTo((yield* publish(encode(next), next.id)).seq)
        expect((yield* notices).length).toBe(4)
      }).pipe(Effect.scoped))
  })
})
