import { describe, expect, it } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { ConfigProvider, Effect, Result, Exit, Layer } from "effect"
import { type AssertedRequest, AssertionVerifier, InternalSecret, makeAssertionVerifier, signAssertion } from "../../src/security/InternalAssertion.js"

const secret = "a-secret-for-verifier-tests-of-32-chars-or-more"
const previous = "the-previous-secret-of-verifier-tests-32-chars+"
const identity = new CallerIdentity({ tenantId: "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f", subject: "sub-1", role: "viewer", scope: "read" })
const request: AssertedRequest = { audience: "referential", method: "GET", target: "/api/v1/referentiel/applications/APP-0001" }
const signedAtMs = 1_800_000_000_000

const opened = (verifier: ReturnType<typeof makeAssertionVerifier>, token: string, nowMs: number) =>
  Result.getOrThrow(verifier.open(token, request, nowMs))

describe("a process's assertion verifier", () => {
  it("accepts an assertion once: the same one again is a replay, until it expires", () => {
    const verifier = makeAssertionVerifier([secret])
    const token = signAssertion(secret, identity, request, { nowMs: signedAtMs })
    const assertion = opened(verifier, token, signedAtMs)
    expect(verifier.firstUse(assertion, signedAtMs)).toBe(true)
    expect(verifier.firstUse(assertion, signedAtMs + 1_000)).toBe(false)
    expect(verifier.firstUse(opened(verifier, token, signedAtMs + 29_000), signedAtMs + 29_000)).toBe(false)
    // Past its expiry it would be refused as expired anyway; the memory need not hold it.
    expect(verifier.open(token, request, signedAtMs + 30_000)).toEqual(Result.fail("expired"))
    expect(verifier.firstUse(assertion, signedAtMs + 30_000)).toBe(true)
  })

  it("tells apart assertions signed alike for the same request", () => {
    const verifier = makeAssertionVerifier([secret])
    const first = opened(verifier, signAssertion(secret, identity, request, { nowMs: signedAtMs }), signedAtMs)
    const second = opened(verifier, signAssertion(secret, identity, request, { nowMs: signedAtMs }), signedAtMs)
    expect([verifier.firstUse(first, signedAtMs), verifier.firstUse(second, signedAtMs)]).toEqual([true, true])
  })

  it("is bounded: past its capacity it forgets the oldest ids first", () => {
    const verifier = makeAssertionVerifier([secret], 2)
    const [a, b, c] = [0, 1, 2].map(() => opened(verifier, signAssertion(secret, identity, request, { nowMs: signedAtMs }), signedAtMs))
    for (const assertion of [a!, b!, c!]) expect(verifier.firstUse(assertion, signedAtMs)).toBe(true)
    expect(verifier.firstUse(c!, signedAtMs)).toBe(false)
    expect(verifier.firstUse(b!, signedAtMs)).toBe(false)
    expect(verifier.firstUse(a!, signedAtMs)).toBe(true)
  })
})

describe("the internal secrets from the environment", () => {
  const load = (env: Record<string, string>) =>
    Effect.gen(function*() {
      const signing = yield* InternalSecret
      const verifier = yield* AssertionVerifier
      const verifies = (key: string) => Result.isSuccess(verifier.open(signAssertion(key, identity, request), request, Date.now()))
      return { signing, current: verifies(secret), previous: verifies(previous) }
    }).pipe(Effect.provide(InternalSecret.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))))

  it.effect("signs with INTERNAL_SECRET and verifies INTERNAL_SECRET_PREVIOUS too when it is set", () =>
    Effect.gen(function*() {
      expect(yield* load({ INTERNAL_SECRET: secret })).toEqual({ signing: secret, current: true, previous: false })
      expect(yield* load({ INTERNAL_SECRET: secret, INTERNAL_SECRET_PREVIOUS: "" })).toEqual({ signing: secret, current: true, previous: false })
      expect(yield* load({ INTERNAL_SECRET: secret, INTERNAL_SECRET_PREVIOUS: previous })).toEqual({ signing: secret, current: true, previous: true })
    }))

  it.effect("refuses to start on a short secret, naming the variable", () =>
    Effect.gen(function*() {
      const short = yield* Effect.exit(load({ INTERNAL_SECRET: secret, INTERNAL_SECRET_PREVIOUS: "too-short" }))
      expect(Exit.isFailure(short) && String(short.cause)).toContain("INTERNAL_SECRET_PREVIOUS must be at least 32 characters")
      const missing = yield* Effect.exit(load({ INTERNAL_SECRET_PREVIOUS: previous }))
      expect(Exit.isFailure(missing) && String(missing.cause)).toContain("INTERNAL_SECRET")
    }))
})
