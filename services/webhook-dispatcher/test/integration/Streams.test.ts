import { restartableJetStream } from "@portfolio/platform/testing/LocalNats"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connect, type NatsConnection, nanos } from "@nats-io/transport-node"
import { AckPolicy, jetstreamManager } from "@nats-io/jetstream"
import { afterAll, beforeAll, expect, it } from "vitest"
import { ensureEventsConsumer, EventsMaxAckPending } from "../../src/adapters/nats/Streams.js"

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
