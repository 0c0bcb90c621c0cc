import { jetstream, jetstreamManager } from "@nats-io/jetstream"
import { AuthorizationError } from "@nats-io/transport-node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Exit } from "effect"
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { ensureEventsStream, natsConnection, natsSettingsConfig } from "../../src/nats/Nats.js"
import { operatorMode, selfSignedCertificate, useNatsServer, userNKey, useTempDir } from "../../testing/NatsServer.js"

// Real servers that demand credentials, beside the unauthenticated one on 4222 that the other
// suites use: each method must get a connection that the server refuses without it.
const dir = useTempDir()
const password = randomBytes(12).toString("hex")
const token = randomBytes(16).toString("hex")
const nkey = userNKey()
const operator = operatorMode()

const users = useNatsServer(dir, "users", () =>
  [
    `jetstream { store_dir: "${join(dir, "jetstream")}" }`,
    `authorization { users: [ { user: gateway, password: "${password}" }, { nkey: ${nkey.publicKey} } ] }`
  ].join("\n"))
const tokens = useNatsServer(dir, "token", () => `authorization { token: "${token}" }`)
const decentralised = useNatsServer(dir, "operator", () => operator.serverConfig)
const tls = useNatsServer(dir, "tls", async () => {
  const { cert, key } = await selfSignedCertificate(dir)
  return `tls { cert_file: "${cert}", key_file: "${key}" }\nauthorization { user: gateway, password: "${password}" }`
})

const file = (name: string, content: string) => {
  const path = join(dir, name)
  writeFileSync(path, content, { mode: 0o600 })
  return path
}

/** Settings read as a service reads them, from these variables. */
const settingsOf = (env: Record<string, string>) =>
  Effect.provideService(natsSettingsConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env)).pipe(Effect.orDie)

/** Connects as every service does, and proves the session with a round trip through the server. */
const roundTrip = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const nc = yield* natsConnection(yield* settingsOf(env), { name: "platform-auth-test", timeout: 3_000, close: "close" })
    const subject = `auth.test.${randomBytes(4).toString("hex")}`
    // A bounded wait: a subscription without a message within `timeout` ends its iteration with an error.
    const received = nc.subscribe(subject, { max: 1, timeout: 3_000 })
    nc.publish(subject, "hello")
    return yield* Effect.promise(async () => {
      for await (const message of received) return message.string()
      return undefined
    })
  }).pipe(Effect.scoped)

/** Why the server (or TLS) refused a connection with these variables; fails the test if it was accepted. */
const refusal = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Effect.scoped(natsConnection(yield* settingsOf(env), { name: "platform-auth-test", timeout: 3_000, close: "close" })))
    if (Exit.isSuccess(exit)) return "accepted"
    const squashed = Cause.squash(exit.cause)
    const error = Cause.isUnknownError(squashed) ? squashed.cause : squashed
    // The client's typed error for the server's "Authorization Violation", named so that a test reads it.
    return error instanceof AuthorizationError ? `AUTHORIZATION_VIOLATION ${error.message}` : error instanceof Error ? error.message : String(error)
  })

describe("NATS credentials, against servers that require them", () => {
  it.live("user and password: refused without or with a wrong password, served with NATS_USER and NATS_PASSWORD, JetStream included", () =>
    Effect.gen(function*() {
      expect(yield* refusal({ NATS_URL: users.url() })).toContain("AUTHORIZATION_VIOLATION")
      expect(yield* refusal({ NATS_URL: users.url(), NATS_USER: "gateway", NATS_PASSWORD: "wrong" })).toContain("AUTHORIZATION_VIOLATION")
      const env = { NATS_URL: users.url(), NATS_USER: "gateway", NATS_PASSWORD: password }
      expect(yield* roundTrip(env)).toBe("hello")
      yield* Effect.gen(function*() {
        const nc = yield* natsConnection(yield* settingsOf(env), { name: "platform-auth-test", timeout: 3_000 })
        const jsm = yield* Effect.promise(() => jetstreamManager(nc))
        expect(yield* Effect.promise(() => ensureEventsStream(jsm, "events.provisioning.member.removed"))).toBe("EVENTS")
        const ack = yield* Effect.promise(() => jetstream(nc).publish("events.authtest.checked", "{}"))
        expect(ack.stream).toBe("EVENTS")
      }).pipe(Effect.scoped)
    }))

  it.live("NKey: refused with an unknown seed, served with NATS_NKEY_SEED_FILE", () =>
    Effect.gen(function*() {
      const stranger = file("stranger.nk", `${userNKey().seed}\n`)
      expect(yield* refusal({ NATS_URL: users.url(), NATS_NKEY_SEED_FILE: stranger })).toContain("AUTHORIZATION_VIOLATION")
      expect(yield* roundTrip({ NATS_URL: users.url(), NATS_NKEY_SEED_FILE: file("gateway.nk", `${nkey.seed}\n`) })).toBe("hello")
    }))

  it.live("token: refused without or with another token, served with NATS_TOKEN", () =>
    Effect.gen(function*() {
      expect(yield* refusal({ NATS_URL: tokens.url() })).toContain("AUTHORIZATION_VIOLATION")
      expect(yield* refusal({ NATS_URL: tokens.url(), NATS_TOKEN: "not-the-token" })).toContain("AUTHORIZATION_VIOLATION")
      expect(yield* roundTrip({ NATS_URL: tokens.url(), NATS_TOKEN: token })).toBe("hello")
    }))

  it.live("creds file (operator mode): refused without, served with NATS_CREDS_FILE", () =>
    Effect.gen(function*() {
      expect(yield* refusal({ NATS_URL: decentralised.url() })).toContain("AUTHORIZATION_VIOLATION")
      expect(yield* roundTrip({ NATS_URL: decentralised.url(), NATS_CREDS_FILE: file("gateway.creds", operator.creds) })).toBe("hello")
    }))

  it.live("TLS: refused without the CA that signed the server's certificate, served with NATS_TLS_CA_FILE", () =>
    Effect.gen(function*() {
      const credentials = { NATS_URL: tls.url(), NATS_USER: "gateway", NATS_PASSWORD: password }
      expect(yield* refusal(credentials)).toMatch(/self[- ]signed|certificate/i)
      expect(yield* roundTrip({ ...credentials, NATS_TLS_CA_FILE: join(dir, "server-cert.pem") })).toBe("hello")
    }))
})
