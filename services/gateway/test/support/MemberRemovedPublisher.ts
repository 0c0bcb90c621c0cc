import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain"
import { plainNats } from "@portfolio/platform/nats"
import { Effect, Schema } from "effect"
import { connect } from "@nats-io/transport-node"
import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { randomUUID } from "node:crypto"

export const servers = "nats://127.0.0.1:4222"
export const nats = plainNats(servers)

/**
 * Publishes `member.removed` as provisioning's relay does, for a test whose listener uses the
 * durable consumer `durable`; the durable is removed when the scope closes.
 */
export const memberRemovedPublisher = (durable: string) =>
  Effect.gen(function*() {
    const nc = yield* Effect.acquireRelease(
      Effect.promise(() => connect({ servers })),
      (c) =>
        Effect.promise(async () => {
          const jsm = await jetstreamManager(c)
          const stream = await jsm.streams.find(MemberRemovedSubject).catch(() => undefined)
          if (stream !== undefined) await jsm.consumers.delete(stream, durable).catch(() => undefined)
          // Every publication was acknowledged: nothing to flush, and a drain can wait on the server.
          await c.close()
        })
    )
    /** Publishes an event, or any text standing for one that cannot be read. */
    const publish = (event: MemberRemoved | string) => {
      const payload = typeof event === "string" ? event : JSON.stringify(Schema.encodeSync(MemberRemoved)(event))
      const msgID = typeof event === "string" ? randomUUID() : event.id
      return Effect.promise(() => jetstream(nc).publish(MemberRemovedSubject, new TextEncoder().encode(payload), { msgID }))
    }
    /** Completes once the listener has set up its durable consumer (and so the stream). */
    const durableReady = Effect.promise(async () => {
      const jsm = await jetstreamManager(nc)
      for (;;) {
        const stream = await jsm.streams.find(MemberRemovedSubject).catch(() => undefined)
        if (stream !== undefined && (await jsm.consumers.info(stream, durable).catch(() => undefined)) !== undefined) return
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    })
    return { publish, durableReady }
  })
