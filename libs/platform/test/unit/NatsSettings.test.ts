import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result, Formatter, Redacted } from "effect"
import { nkeys } from "@nats-io/transport-node"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { natsConnectionOptions, natsSettingsConfig } from "../../src/nats/Nats.js"

const dir = mkdtempSync(join(tmpdir(), "nats-config-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const file = (name: string, content: string) => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

const userSeed = new TextDecoder().decode((nkeys as { createUser(): { getSeed(): Uint8Array } }).createUser().getSeed())
const accountSeed = new TextDecoder().decode((nkeys as { createAccount(): { getSeed(): Uint8Array } }).createAccount().getSeed())

const load = (env: Record<string, string>) =>
  Effect.result(Effect.provideService(natsSettingsConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env)))

const refusal = (env: Record<string, string>) =>
  Effect.map(load(env), (result) => (Result.isFailure(result) ? String(result.failure) : "accepted"))

describe("NATS settings", () => {
  it.effect("default to the local server without credentials or TLS", () =>
    Effect.gen(function*() {
      expect(Result.getOrThrow(yield* load({}))).toEqual({ servers: "nats://127.0.0.1:4222", auth: { method: "none" }, tls: undefined, replicas: 1 })
      // An optional variable left empty, as Kubernetes and shells do, is unset.
      expect(Result.getOrThrow(yield* load({ NATS_TOKEN: "", NATS_USER: " ", NATS_CREDS_FILE: "" })).auth).toEqual({ method: "none" })
    }))

  it.effect("keep NATS_REPLICAS copies of what the platform creates, from 1 to 5", () =>
    Effect.gen(function*() {
      expect(Result.getOrThrow(yield* load({ NATS_REPLICAS: "3" })).replicas).toBe(3)
      // Left empty, as Kubernetes and shells do: unset.
      expect(Result.getOrThrow(yield* load({ NATS_REPLICAS: "" })).replicas).toBe(1)
      for (const refused of ["0", "6", "three"]) expect(yield* refusal({ NATS_REPLICAS: refused })).toContain("NATS_REPLICAS")
    }))

  it.effect("take one method each, secrets redacted", () =>
    Effect.gen(function*() {
      const userPassword = Result.getOrThrow(yield* load({ NATS_USER: "gateway", NATS_PASSWORD: "pa55-word" }))
      expect(userPassword.auth).toMatchObject({ method: "user-password", user: "gateway" })
      const token = Result.getOrThrow(yield* load({ NATS_TOKEN: "t0ken-value" }))
      expect(token.auth.method === "token" && Redacted.value(token.auth.token)).toBe("t0ken-value")
      for (const settings of [userPassword, token]) {
        const written = [JSON.stringify(settings), String(settings.auth), Formatter.format(settings)].join(" ")
        expect(written).not.toMatch(/pa55-word|t0ken-value/)
      }
      const creds = file("ok.creds", `-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QifQ.e30.sig\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${userSeed}\n------END USER NKEY SEED------\n`)
      expect(Result.getOrThrow(yield* load({ NATS_CREDS_FILE: creds })).auth).toEqual({ method: "creds-file", path: creds })
      const seed = file("ok.nk", `${userSeed}\n`)
      expect(Result.getOrThrow(yield* load({ NATS_NKEY_SEED_FILE: seed })).auth).toEqual({ method: "nkey-seed-file", path: seed })
    }))

  it.effect("refuse two methods at once, naming them", () =>
    Effect.gen(function*() {
      const seed = file("two.nk", userSeed)
      const both = yield* refusal({ NATS_TOKEN: "t", NATS_NKEY_SEED_FILE: seed })
      expect(both).toContain("NATS_NKEY_SEED_FILE")
      expect(both).toContain("is set beside NATS_TOKEN")
      expect(yield* refusal({ NATS_USER: "u", NATS_PASSWORD: "p", NATS_TOKEN: "t" })).toContain("NATS_TOKEN: \"is set beside NATS_USER/NATS_PASSWORD")
    }))

  it.effect("refuse a user without a password and the other way round", () =>
    Effect.gen(function*() {
      expect(yield* refusal({ NATS_USER: "gateway" })).toContain("NATS_PASSWORD: \"is required with NATS_USER")
      expect(yield* refusal({ NATS_PASSWORD: "p" })).toContain("NATS_USER: \"is required with NATS_PASSWORD")
    }))

  it.effect("refuse files that cannot be read or do not hold what they should, naming the variable", () =>
    Effect.gen(function*() {
      expect(yield* refusal({ NATS_CREDS_FILE: join(dir, "missing.creds") })).toMatch(/NATS_CREDS_FILE: "cannot read '.*missing\.creds' \(ENOENT\)/)
      expect(yield* refusal({ NATS_CREDS_FILE: file("bad.creds", "not a creds file") })).toContain("NATS_CREDS_FILE: \"does not hold NATS credentials")
      expect(yield* refusal({ NATS_NKEY_SEED_FILE: file("bad.nk", "SUNOTASEED") })).toContain("NATS_NKEY_SEED_FILE: \"does not hold a user NKey seed")
      // An account's seed signs too, but the server only takes a user's.
      expect(yield* refusal({ NATS_NKEY_SEED_FILE: file("account.nk", accountSeed) })).toContain("its key is not a user key")
      // root reads any file whatever its mode: the case means something for other users only.
      if (process.getuid?.() !== 0) {
        const unreadable = file("unreadable.nk", userSeed)
        chmodSync(unreadable, 0o000)
        expect(yield* refusal({ NATS_NKEY_SEED_FILE: unreadable })).toContain("NATS_NKEY_SEED_FILE: \"cannot read")
      }
      expect(yield* refusal({ NATS_TLS_CA_FILE: join(dir, "missing-ca.pem") })).toContain("NATS_TLS_CA_FILE: \"cannot read")
      expect(yield* refusal({ NATS_TLS_CERT_FILE: file("cert.pem", "x") })).toContain("NATS_TLS_KEY_FILE: \"is required with NATS_TLS_CERT_FILE")
    }))

  it.effect("refuse credentials written into NATS_URL, which is not a secret", () =>
    Effect.gen(function*() {
      expect(yield* refusal({ NATS_URL: "nats://gateway:secret@nats:4222" })).toContain("NATS_URL: \"carries credentials")
      expect(yield* refusal({ NATS_URL: "nats://a:4222,tls://token@b:4222" })).toContain("NATS_URL")
      expect(yield* refusal({ NATS_URL: "tls://nats.example.com:4222" })).toBe("accepted")
      // No server at all would have the client try 127.0.0.1:4222 in silence.
      expect(yield* refusal({ NATS_URL: " , " })).toContain("NATS_URL")
    }))

  it.effect("give the client an authenticator and TLS only when configured", () =>
    Effect.gen(function*() {
      expect(natsConnectionOptions(Result.getOrThrow(yield* load({})))).toEqual({ servers: ["nats://127.0.0.1:4222"] })
      // A cluster's servers, as one variable: a list for the client, which would read the string as one URL.
      expect(natsConnectionOptions(Result.getOrThrow(yield* load({ NATS_URL: "nats://a.test:4222, nats://b.test:4222,nats://c.test:4222" }))).servers)
        .toEqual(["nats://a.test:4222", "nats://b.test:4222", "nats://c.test:4222"])
      const ca = file("ca.pem", "-----BEGIN CERTIFICATE-----\n")
      const options = natsConnectionOptions(Result.getOrThrow(yield* load({ NATS_TOKEN: "t0ken-value", NATS_TLS_CA_FILE: ca })))
      expect(options.tls).toEqual({ caFile: ca })
      const authenticator = options.authenticator
      expect(typeof authenticator === "function" && authenticator("nonce")).toEqual({ auth_token: "t0ken-value" })
    }))
})
