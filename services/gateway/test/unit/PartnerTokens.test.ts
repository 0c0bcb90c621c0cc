import { PublicApi } from "@portfolio/domain"
import { describe, expect, it, layer } from "@effect/vitest"
import { Clock, Context, Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { PartnerTokensJoseWith } from "../../src/adapters/jose/PartnerTokensJose.js"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { ScimTokenCacheMemory } from "../../src/adapters/memory/ScimTokenCacheMemory.js"
import { RecentlyValidTokensMemory } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { RateLimitStoreMemory } from "../../src/adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { SpentAddressesMemory } from "../../src/adapters/memory/rate-limit/SpentAddressesMemory.js"
import type { SigningJwk } from "../../src/Config.js"
import { allowListOf } from "../../src/domain/AllowList.js"
import { PartnerTokens, type PartnerTokensShape } from "../../src/ports/PartnerTokens.js"
import { admitRequest } from "../../src/usecases/AdmitRequest.js"
import { PatRepositoryMemory } from "../support/PatRepositoryMemory.js"
import { ScimTokenRepositoryMemory } from "../support/ScimTokenRepositoryMemory.js"
import { newSigningKey, TestSigningKey } from "../support/SigningKeys.js"
import { testConfigLayer } from "../support/testConfig.js"

const access = { clientId: "service-partner-acme-erp", tenantId: "6a2b9a58-3f0e-4c55-9a53-0b5f0a8f1c11", scope: "read" } as const
const readPath = "/api/v1/referentiel/applications"
const route = allowListOf(PublicApi).match("GET", readPath)

const AdmissionLive = Layer.mergeAll(PatRepositoryMemory.layer, ScimTokenRepositoryMemory.layer, PatCacheMemory, ScimTokenCacheMemory, RateLimitStoreMemory, SpentAddressesMemory, RecentlyValidTokensMemory, PartnerTokensJoseWith([TestSigningKey]))
  .pipe(Layer.provideMerge(testConfigLayer()))

const outcomeOf = (token: string) =>
  Effect.map(
    admitRequest({ method: "GET", path: readPath, route, authorization: `Bearer ${token}`, clientIp: "192.0.2.1" }),
    (verdict) => Result.match(verdict.outcome, { onFailure: (e) => `${e._tag}: ${e.detail}`, onSuccess: (a) => `admitted as ${a.caller.subject}` })
  )

describe("partner access tokens at admission (test clock)", () => {
  layer(AdmissionLive)((it) => {
    it.effect("admits a token for 5 minutes and refuses it with 401 from then on", () =>
      Effect.gen(function*() {
        const tokens = yield* PartnerTokens
        const { expiresIn, token } = yield* tokens.issue(access, yield* Clock.currentTimeMillis)
        expect(expiresIn).toBe(300)
        expect(yield* outcomeOf(token)).toBe("admitted as service-partner-acme-erp")
        yield* TestClock.adjust("299 seconds")
        expect(yield* outcomeOf(token)).toBe("admitted as service-partner-acme-erp")
        yield* TestClock.adjust("1 second")
        expect(yield* outcomeOf(token)).toBe("Unauthenticated: The access token is not valid: unknown key, bad signature or claims, or expired.")
      }))
  })
})

/** One adapter per configuration, as one gateway replica holds it. */
const replicaWith = (keys: ReadonlyArray<SigningJwk>) =>
  Effect.map(Layer.build(PartnerTokensJoseWith(keys).pipe(Layer.provide(testConfigLayer()))), (context) => Context.get(context, PartnerTokens))

interface Live {
  readonly token: string
  readonly expiresAtMs: number
}

/**
 * A rolling update through `phases` (each a replica's configuration), one second a tick: while a
 * step rolls, replicas of the old and the new configuration serve together; a step may be held
 * for a while before the next one. Each tick a random running replica issues a token, and every
 * token still alive is presented, all at once, to a random running replica. Answers the number of
 * verifications and of failures.
 */
const rollThrough = (phases: ReadonlyArray<{ readonly replica: PartnerTokensShape; readonly holdSeconds: number }>) =>
  Effect.gen(function*() {
    let nowMs = Date.UTC(2026, 6, 1)
    let live: Array<Live> = []
    let verified = 0
    let failed = 0
    const pick = <A>(from: ReadonlyArray<A>) => from[Math.floor(Math.random() * from.length)]!
    const tick = (running: ReadonlyArray<PartnerTokensShape>) =>
      Effect.gen(function*() {
        const issued = yield* pick(running).issue(access, nowMs)
        live.push({ token: issued.token, expiresAtMs: nowMs + issued.expiresIn * 1000 })
        live = live.filter((t) => t.expiresAtMs > nowMs)
        const results = yield* Effect.forEach(live, (t) => Effect.result(pick(running).verify(t.token, nowMs)), { concurrency: "unbounded" })
        verified += results.length
        failed += results.filter(Result.isFailure).length
        nowMs += 1000
      })
    for (const [index, phase] of phases.entries()) {
      const previous = phases[index - 1]
      // 30 seconds with both configurations running, then the new one alone for its hold.
      if (previous !== undefined) for (let s = 0; s < 30; s++) yield* tick([previous.replica, phase.replica])
      for (let s = 0; s < phase.holdSeconds; s++) yield* tick([phase.replica])
    }
    return { verified, failed }
  })

describe("signing key rotation with requests in flight", () => {
  it.effect("publish, then sign, then retire after the token lifetime: no request fails", () =>
    Effect.gen(function*() {
      const a = newSigningKey("key-a")
      const b = newSigningKey("key-b", "EdDSA")
      const result = yield* rollThrough([
        { replica: yield* replicaWith([a]), holdSeconds: 30 },
        // B published (verifies) before anyone signs with it.
        { replica: yield* replicaWith([a, b]), holdSeconds: 30 },
        // B signs; A stays until every token it signed has expired (5 minutes).
        { replica: yield* replicaWith([b, a]), holdSeconds: 300 },
        { replica: yield* replicaWith([b]), holdSeconds: 30 }
      ])
      expect(result.verified).toBeGreaterThan(10_000)
      expect(result.failed).toBe(0)
    }), 60_000)

  it.effect("the check notices a rotation that skips a step: signing with a key not yet published everywhere fails requests", () =>
    Effect.gen(function*() {
      const a = newSigningKey("key-a")
      const b = newSigningKey("key-b")
      const result = yield* rollThrough([
        { replica: yield* replicaWith([a]), holdSeconds: 30 },
        { replica: yield* replicaWith([b, a]), holdSeconds: 30 }
      ])
      expect(result.failed).toBeGreaterThan(0)
    }), 60_000)
})
