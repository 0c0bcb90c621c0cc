import { jetstreamManager } from "@nats-io/jetstream"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { freePort } from "../../testing/FreePort.js"
import { ensureEventsStream, NatsSettings, natsConnection, plainNats } from "../../src/nats/Nats.js"

describe("the EVENTS stream", () => {
  it.effect("captures every events.<service>.<kind> subject, whichever process ensured it first", () =>
    Effect.gen(function*() {
      const settings = yield* NatsSettings.config
      const nc = yield* natsConnection(settings, { name: "platform-test" })
      const jsm = yield* Effect.promise(() => jetstreamManager(nc))
      const subject = `events.platformtest${randomBytes(4).toString("hex")}.created`
      const existing = yield* Effect.promise(() => ensureEventsStream(jsm, "events.provisioning.member.removed"))
      expect(existing).toBe("EVENTS")
      expect(yield* Effect.promise(() => ensureEventsStream(jsm, subject))).toBe("EVENTS")
      const info = yield* Effect.promise(() => jsm.streams.info("EVENTS"))
      expect(info.config.subjects).toContain("events.>")
    }))
})

describe("a connection to a cluster's servers", () => {
  it.effect("reaches the server that answers when another of NATS_URL's list does not", () =>
    Effect.gen(function*() {
      // The machine's server, then a port nothing listens on: whichever the client tries first, it
      // connects. As one string the client would take the last address only (what follows the last
      // "://"), the closed one.
      const closed = yield* Effect.promise(() => freePort())
      const nc = yield* natsConnection(plainNats(`nats://127.0.0.1:4222, nats://127.0.0.1:${closed}`), { name: "platform-test-list" })
      expect(nc.getServer()).toBe("127.0.0.1:4222")
      yield* Effect.promise(() => nc.flush())
    }))
})

describe("a connection's requests", () => {
  it.effect("capture no stack in advance: a failed request's error is made when it fails, not where it was asked", () =>
    Effect.gen(function*() {
      const settings = yield* NatsSettings.config
      const nc = yield* natsConnection(settings, { name: "platform-test-traces" })
      // The client's async traces would make the error inside `askedHere`, before any reply, so its
      // stack would name this function: the cost paid on every request and publish.
      const askedHere = () => nc.request(`platformtest.nobody.${randomBytes(4).toString("hex")}`, "", { timeout: 2_000 })
      const failure = yield* Effect.promise(() => askedHere().then(() => undefined, (error: unknown) => error))
      expect(failure).toBeInstanceOf(Error)
      expect((failure as Error).message).toMatch(/no responders/i)
      expect((failure as Error).stack).not.toContain("askedHere")
    }))
})
