import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { ensureEventsStream, NatsConfig, natsConnection } from "../../src/Nats.js"

describe("the EVENTS stream", () => {
  it.scoped("captures every events.<service>.<kind> subject, whichever process ensured it first", () =>
    Effect.gen(function*() {
      const settings = yield* NatsConfig.config
      const nc = yield* natsConnection(settings, { name: "platform-test" })
      const jsm = yield* Effect.promise(() => nc.jetstreamManager())
      const subject = `events.platformtest${randomBytes(4).toString("hex")}.created`
      const existing = yield* Effect.promise(() => ensureEventsStream(jsm, "events.provisioning.member.removed"))
      expect(existing).toBe("EVENTS")
      expect(yield* Effect.promise(() => ensureEventsStream(jsm, subject))).toBe("EVENTS")
      const info = yield* Effect.promise(() => jsm.streams.info("EVENTS"))
      expect(info.config.subjects).toContain("events.>")
    }))
})
