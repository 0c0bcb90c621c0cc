import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result } from "effect"
import { parseSigningKeys, signingKeysConfig } from "../../src/Config.js"
import { generateKeyPairSync } from "node:crypto"
import { newSigningKey } from "../support/SigningKeys.js"

const load = (env: Record<string, string>) =>
  Effect.result(Effect.provideService(signingKeysConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))

describe("OAUTH_SIGNING_KEYS", () => {
  it("takes P-256 and Ed25519 private keys in order, keeping only what a key needs", () => {
    const es = newSigningKey("a", "ES256")
    const ed = newSigningKey("b", "EdDSA")
    expect(Result.getOrThrow(parseSigningKeys(JSON.stringify([{ ...es, alg: "ES256", use: "sig" }, ed])))).toEqual([es, ed])
  })

  it("takes a PEM private key (as Helm's genPrivateKey draws one) with its kid, as the same key", () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const jwk = privateKey.export({ format: "jwk" })
    const pem = privateKey.export({ format: "pem", type: "sec1" }).toString()
    expect(Result.getOrThrow(parseSigningKeys(JSON.stringify([{ kid: "chart-1", pem }])))).toEqual([
      { kid: "chart-1", kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y, d: jwk.d }
    ])
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ format: "pem", type: "pkcs8" }).toString()
    expect(parseSigningKeys(JSON.stringify([{ kid: "r", pem: rsa }]))).toEqual(Result.fail("key 0 is neither an EC P-256 (ES256) nor an OKP Ed25519 (EdDSA) key"))
    expect(parseSigningKeys(JSON.stringify([{ kid: "x", pem: "not a pem" }]))).toEqual(Result.fail("key 0 has a 'pem' that is not a PEM private key"))
  })

  it("refuses what cannot sign, saying which key and why", () => {
    const es = newSigningKey("a", "ES256")
    const { d: _, ...publicOnly } = es
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["not json", "must be a JSON array of private JWKs"],
      ["[]", "must be a non-empty JSON array of private JWKs (the first signs)"],
      ["{}", "must be a non-empty JSON array of private JWKs (the first signs)"],
      ["[1]", "key 0 is not a JSON object"],
      [JSON.stringify([publicOnly]), "key 0 is not a private key (no 'd')"],
      [JSON.stringify([{ ...es, kid: "" }]), "key 0 has no 'kid' (1 to 128 characters)"],
      [JSON.stringify([es, { kty: "RSA", kid: "r", n: "x", e: "AQAB", d: "y" }]), "key 1 is neither an EC P-256 (ES256) nor an OKP Ed25519 (EdDSA) key"],
      [JSON.stringify([{ ...es, crv: "P-384" }]), "key 0 is neither an EC P-256 (ES256) nor an OKP Ed25519 (EdDSA) key"],
      [JSON.stringify([es, { ...newSigningKey("a", "EdDSA") }]), "the kid 'a' is given twice"]
    ]
    for (const [text, problem] of cases) expect(parseSigningKeys(text)).toEqual(Result.fail(problem))
  })

  it.effect("is required, and a bad value names the variable", () =>
    Effect.gen(function*() {
      const missing = yield* load({})
      expect(Result.isFailure(missing) && String(missing.failure)).toContain("OAUTH_SIGNING_KEYS")
      const bad = yield* load({ OAUTH_SIGNING_KEYS: "[]" })
      expect(Result.isFailure(bad) && String(bad.failure)).toContain("OAUTH_SIGNING_KEYS")
      expect(Result.isSuccess(yield* load({ OAUTH_SIGNING_KEYS: JSON.stringify([newSigningKey("k")]) }))).toBe(true)
    }))
})
