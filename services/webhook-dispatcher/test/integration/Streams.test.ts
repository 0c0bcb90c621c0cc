import { plainNats } from "@portfolio/platform/nats"
import { restartableJetStream, useNatsCluster } from "@portfolio/platform/testing"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node"
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureEventsConsumer, ensureWakeupsConsumer, ensureWakeupsStream, EventsMaxAckPending, wakeupSubject, WakeupsStream } from "../../src/adapters/nats/Streams.js"

/** The events' durable on a private nats-server: its filter is `events.>`, which the suite's NATS has a stream for already. */
const stream = "EVENTS"
const storeDir = mkdtempSync(join(tmpdir(), "streams-js-"))
let nats: Awaited<ReturnType<typeof restartableJetStream>>
let nc: NatsConnection

beforeAll(async () => {
  nats = await restartableJetStream(storeDir)
  nc = await connect({ servers: nats.url })
  const jsm = await jetstreamManager(nc)
  await jsm.streams.add({ name: stream, subjects: ["events.>"] })
}, 60_000)

afterAll(async () => {
  await nc?.close()
  await nats?.stop()
  rmSync(storeDir, { recursive: true, force: true })
})

it("makes the events' durable with room for the messages held until their first attempts are recorded, and widens one an earlier version made", async () => {
  const jsm = await jetstreamManager(nc)
  await ensureEventsConsumer(jsm, stream, "fresh", new Date())
  const fresh = await jsm.consumers.info(stream, "fresh")
  expect(fresh.config.max_ack_pending).toBe(EventsMaxAckPending)
  expect(fresh.config.ack_wait).toBe(nanos(30_000))

  // As an earlier version made it: 1,000 unacknowledged messages at most.
  await jsm.consumers.add(stream, { durable_name: "earlier", ack_policy: AckPolicy.Explicit, filter_subject: "events.>", max_ack_pending: 1_000 })
  await ensureEventsConsumer(jsm, stream, "earlier", new Date())
  expect((await jsm.consumers.info(stream, "earlier")).config.max_ack_pending).toBe(EventsMaxAckPending)
})

// The wake-ups' stream on a three-server cluster, as production runs it (NATS_URL listing the
// servers, NATS_REPLICAS=3), beside EVENTS (libs/platform's NatsCluster.test.ts) and the rate-limit
// bucket (the gateway's RateLimitStoreKv.test.ts): kept on three servers, so that a retry waiting
// in it survives the loss of the server that leads it.
const cluster = useNatsCluster()

/** Retried while the cluster elects its leaders (after start, after a kill): JetStream answers "no leader" meanwhile. */
const untilAnswered = async <A>(attempt: () => Promise<A>): Promise<A> => {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt()
    } catch (error) {
      if (tries >= 120) throw error
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
}

describe("WEBHOOK_WAKEUPS on a three-server JetStream cluster", () => {
  it("is created at NATS_REPLICAS copies, its durable too, and a waiting wake-up survives the loss of the stream's leader", async () => {
    const settings = plainNats(cluster.urls(), 3)
    const clustered = await connect({ servers: settings.servers.split(",") })
    try {
      const jsm = await untilAnswered(() => jetstreamManager(clustered))
      await untilAnswered(() => ensureWakeupsStream(jsm, settings.replicas))
      const info = await untilAnswered(() => jsm.streams.info(WakeupsStream))
      expect(info.config.num_replicas).toBe(3)
      // The leader and two followers: every server of the cluster holds it.
      expect(info.cluster?.leader).toBeDefined()
      expect(info.cluster?.replicas?.map((replica) => replica.name).sort()).toEqual(cluster.servers().map((server) => server.name).filter((name) => name !== info.cluster?.leader).sort())
      // Found as it is: a second replica of the dispatcher starting changes nothing.
      await ensureWakeupsStream(jsm, settings.replicas)
      expect((await jsm.streams.info(WakeupsStream)).config.num_replicas).toBe(3)

      const deploymentId = "clustertest"
      const durable = "webhook-dispatcher-wakeups-clustertest"
      await untilAnswered(() => ensureWakeupsConsumer(jsm, durable, deploymentId))
      // Asked before its group has elected a leader, the durable lists every server as a replica
      // (a CI once saw 3): its leader first, then its followers.
      const consumer = await untilAnswered(async () => {
        const found = await jsm.consumers.info(WakeupsStream, durable)
        if (found.cluster?.leader === undefined || found.cluster.leader === "") throw new Error("the durable has no leader yet")
        return found
      })
      // A durable follows its stream's replicas unless told otherwise.
      expect(consumer.cluster?.replicas).toHaveLength(2)

      const js = jetstream(clustered)
      await untilAnswered(() => js.publish(wakeupSubject(deploymentId), "before"))
      const lost = cluster.servers().find((server) => server.name === info.cluster?.leader)!
      await lost.kill()
      await untilAnswered(() => js.publish(wakeupSubject(deploymentId), "after"))

      const received: Array<string> = []
      await untilAnswered(async () => {
        const messages = await (await js.consumers.get(WakeupsStream, durable)).fetch({ max_messages: 2, expires: 2_000 })
        for await (const message of messages) {
          received.push(message.string())
          message.ack()
        }
        if (received.length < 2) throw new Error(`received ${received.join(", ")}`)
      })
      expect(received).toEqual(["before", "after"])
      expect((await untilAnswered(() => jsm.streams.info(WakeupsStream))).cluster?.leader).not.toBe(lost.name)
      await lost.start()
    } finally {
      await clustered.close()
    }
  }, 120_000)
})
