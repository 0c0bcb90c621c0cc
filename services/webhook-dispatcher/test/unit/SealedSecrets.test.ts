import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { makeSecretSealer, SecretSealer, signingSecretSealKey } from "../../src/adapters/postgres/SealedSecrets.js"
import { makeTargetOpener } from "../../src/adapters/postgres/SubscriptionRows.js"
import { newSigningSecret } from "../../src/domain/Signature.js"

const oldInternal = "an internal secret of at least 32 characters, the old one"
const newInternal = "an internal secret of at least 32 characters, the new one"
const subscriptionId = "3f1c2b4a-6d5e-4f70-8a9b-0c1d2e3f4a5b"
const otherSubscriptionId = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"

describe("sealed signing secrets", () => {
  const secret = newSigningSecret(randomBytes(32))

  it.effect("open for the subscription they were sealed for, with a fresh IV each time and nothing of the secret in clear", () =>
    Effect.gen(function*() {
      const sealer = makeSecretSealer(newInternal)
      const [first, second] = [yield* sealer.sealSecret(subscriptionId, secret), yield* sealer.sealSecret(subscriptionId, secret)]
      expect(first.equals(second)).toBe(false)
      expect(first.toString("latin1")).not.toContain(secret.slice(6, 20))
      expect(sealer.openSecret(subscriptionId, first)).toEqual(Option.some(secret))
      expect(sealer.openSecret(subscriptionId, second)).toEqual(Option.some(secret))
    }))

  it.effect("do not open on another subscription's row", () =>
    Effect.gen(function*() {
      const sealer = makeSecretSealer(newInternal, oldInternal)
      expect(sealer.openSecret(otherSubscriptionId, yield* sealer.sealSecret(subscriptionId, secret))).toEqual(Option.none())
    }))

  it.effect("sealed under INTERNAL_SECRET_PREVIOUS still open during a rotation, and are sealed anew under the current key", () =>
    Effect.gen(function*() {
      const sealedBefore = yield* makeSecretSealer(oldInternal).sealSecret(subscriptionId, secret)
      const rotating = makeSecretSealer(newInternal, oldInternal)
      expect(rotating.openSecret(subscriptionId, sealedBefore)).toEqual(Option.some(secret))
      expect(makeSecretSealer(newInternal).openSecret(subscriptionId, sealedBefore)).toEqual(Option.none())

      const resealed = yield* rotating.reseal(subscriptionId, sealedBefore)
      expect(Option.isSome(resealed)).toBe(true)
      expect(makeSecretSealer(newInternal).openSecret(subscriptionId, Option.getOrThrow(resealed))).toEqual(Option.some(secret))
      // Nothing to rewrite: already under the current key, or opened by neither.
      expect(yield* rotating.reseal(subscriptionId, Option.getOrThrow(resealed))).toEqual(Option.none())
      expect(yield* makeSecretSealer(newInternal).reseal(subscriptionId, sealedBefore)).toEqual(Option.none())
    }))

  it.effect("refuse garbage, altered or cut bytes, and another secret's key", () =>
    Effect.gen(function*() {
      const sealer = makeSecretSealer(newInternal, oldInternal)
      const sealed = yield* sealer.sealSecret(subscriptionId, secret)
      const flipped = Buffer.from(sealed)
      flipped[20]! ^= 1
      expect([
        sealer.openSecret(subscriptionId, randomBytes(80)),
        sealer.openSecret(subscriptionId, Buffer.alloc(0)),
        sealer.openSecret(subscriptionId, Buffer.from(secret)),
        sealer.openSecret(subscriptionId, flipped),
        sealer.openSecret(subscriptionId, sealed.subarray(0, 28)),
        sealer.openSecret(subscriptionId, Buffer.concat([Buffer.of(2), sealed.subarray(1)])),
        makeSecretSealer(`${newInternal}!`).openSecret(subscriptionId, sealed)
      ]).toEqual(Array.from({ length: 7 }, () => Option.none()))
    }))

  it("use a key of their own label, unrelated to the internal secret itself", () => {
    const key = signingSecretSealKey(newInternal)
    expect(key).toHaveLength(32)
    expect(key.equals(Buffer.from(newInternal).subarray(0, 32))).toBe(false)
    expect(key.equals(signingSecretSealKey(oldInternal))).toBe(false)
  })

  it.effect("read INTERNAL_SECRET and INTERNAL_SECRET_PREVIOUS as the assertions do", () =>
    Effect.gen(function*() {
      const sealedBefore = yield* makeSecretSealer(oldInternal).sealSecret(subscriptionId, secret)
      const fromConfig = (entries: Record<string, string>) =>
        SecretSealer.pipe(
          Effect.provide(SecretSealer.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(entries))))),
          Effect.result
        )
      const rotating = yield* fromConfig({ INTERNAL_SECRET: newInternal, INTERNAL_SECRET_PREVIOUS: oldInternal })
      expect(rotating._tag === "Success" && rotating.success.openSecret(subscriptionId, sealedBefore)).toEqual(Option.some(secret))
      // Empty counts as unset, as for the assertions.
      const settled = yield* fromConfig({ INTERNAL_SECRET: newInternal, INTERNAL_SECRET_PREVIOUS: "" })
      expect(settled._tag === "Success" && settled.success.openSecret(subscriptionId, sealedBefore)).toEqual(Option.none())
      expect((yield* fromConfig({ INTERNAL_SECRET: "too short" }))._tag).toBe("Failure")
    }))

  it.effect("fixed gives the same sealer for tests", () =>
    Effect.gen(function*() {
      const sealer = yield* SecretSealer.pipe(Effect.provide(SecretSealer.fixed(newInternal, oldInternal)))
      const sealed = yield* makeSecretSealer(oldInternal).sealSecret(subscriptionId, secret)
      expect(sealer.openSecret(subscriptionId, sealed)).toEqual(Option.some(secret))
    }))
})

describe("the hot path's target opener", () => {
  const row = (sealedSecret: Uint8Array, changes: Partial<{ url: string; state: "enabled" | "disabled"; previousSecretExpiresAt: Date | null }> = {}) => ({
    tenantId: "tenant",
    url: "https://hooks.example.com/a",
    state: "enabled" as const,
    sealedSecret: Buffer.from(sealedSecret),
    sealedPreviousSecret: null,
    previousSecretExpiresAt: null,
    ...changes
  })

  it.effect("opens a secret once per sealed value, and sees a rotation, a re-seal and every other column change", () =>
    Effect.gen(function*() {
      const sealer = makeSecretSealer(newInternal)
      let openings = 0
      const open = makeTargetOpener({ ...sealer, openSecret: (id, sealed) => (openings++, sealer.openSecret(id, sealed)) })
      const [first, rotated] = [newSigningSecret(randomBytes(32)), newSigningSecret(randomBytes(32))]
      const sealedFirst = yield* sealer.sealSecret(subscriptionId, first)
      const target = open(subscriptionId, row(sealedFirst))
      expect(target.secret).toBe(first)
      // The same row again, as a copy the database answers anew: the same target, nothing opened.
      expect(open(subscriptionId, row(sealedFirst))).toBe(target)
      expect(openings).toBe(1)
      const moved = open(subscriptionId, row(sealedFirst, { url: "https://hooks.example.com/b", state: "disabled" }))
      expect(moved).toMatchObject({ secret: first, url: "https://hooks.example.com/b", state: "disabled" })
      expect(openings).toBe(1)
      expect(open(subscriptionId, row(yield* sealer.sealSecret(subscriptionId, rotated))).secret).toBe(rotated)
      // The same secret sealed again (a new IV): other bytes, opened again.
      expect(open(subscriptionId, row(yield* sealer.sealSecret(subscriptionId, first))).secret).toBe(first)
      expect(openings).toBe(3)
    }))
})
