import { describe, expect, layer } from "@effect/vitest"
import { FreshPgLive } from "@portfolio/platform/testing"
import { SqlClient } from "effect/sql"
import { SecurityEvent } from "@portfolio/domain"
import { SecurityLog } from "@portfolio/platform/security"
import { DateTime, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { PgAdaptersLive } from "../../src/adapters/postgres/PgAdapters.js"
import { sessionIdHash } from "../../src/domain/SessionRules.js"
import { SessionRepository } from "../../src/ports/SessionRepository.js"
import { SignInAttempts } from "../../src/ports/SignInAttempts.js"

const TestLive = PgAdaptersLive.pipe(Layer.provideMerge(MigrationsLive), Layer.provideMerge(FreshPgLive("it_console", 30)))
const policy = { maxFailuresPerEmail: 5, maxFailuresPerAddress: 50, windowMs: 15 * 60_000 }
const tenantA = randomUUID()
const tenantB = randomUUID()

describe("the console's PostgreSQL adapters", () => {
  layer(TestLive, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("admit exactly 5 of 30 simultaneous attempts on one e-mail, across connections, and forget them on success", () =>
      Effect.gen(function*() {
        const attempts = yield* SignInAttempts
        const atMs = Date.now()
        const results = yield* Effect.all(
          Array.from({ length: 30 }, (_, i) => attempts.begin({ emailKey: "race@acme.test", ip: `10.0.0.${i}`, atMs }, policy)),
          { concurrency: "unbounded" }
        )
        const admitted = results.filter((r) => r.admission._tag === "Admitted")
        expect(admitted).toHaveLength(5)
        expect(results.filter((r) => r.admission._tag === "Locked").every((r) => r.attemptId === undefined)).toBe(true)
        // The lock lasts the window from the latest failure.
        const locked = results.find((r) => r.admission._tag === "Locked")!.admission
        expect(locked._tag === "Locked" && locked.retryAfterMs).toBe(policy.windowMs)
        // An abandoned attempt (provisioning away) counts for nothing.
        yield* attempts.abandoned(admitted[0]!.attemptId!)
        const next = yield* attempts.begin({ emailKey: "race@acme.test", ip: "10.0.1.1", atMs }, policy)
        expect(next.admission._tag).toBe("Admitted")
        yield* attempts.succeeded(next.attemptId!, "race@acme.test")
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`SELECT count(*)::int AS n FROM console.sign_in_attempts WHERE email_key = 'race@acme.test'`).toEqual([{ n: 0 }])
      }))

    it.effect("lock an address after its failures on any e-mails; old attempts age out (Pruning.test.ts sweeps them)", () =>
      Effect.gen(function*() {
        const attempts = yield* SignInAttempts
        const atMs = Date.now()
        const tight = { ...policy, maxFailuresPerAddress: 3 }
        for (const email of ["a@x.test", "b@x.test", "c@x.test"]) {
          expect((yield* attempts.begin({ emailKey: email, ip: "192.0.2.9", atMs }, tight)).admission._tag).toBe("Admitted")
        }
        expect((yield* attempts.begin({ emailKey: "d@x.test", ip: "192.0.2.9", atMs }, tight)).admission._tag).toBe("Locked")
        expect((yield* attempts.begin({ emailKey: "d@x.test", ip: "192.0.2.9", atMs: atMs + policy.windowMs + 1 }, tight)).admission._tag).toBe("Admitted")
      }))

    it.effect("keep sessions by the hash of their id, touch and move them (Pruning.test.ts sweeps the idle ones)", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionRepository
        const idHash = sessionIdHash("the-cookie-value")
        const record = {
          idHash,
          userSub: "sub-1",
          email: "one@acme.test",
          tenantId: null,
          ssoTenantId: null,
          csrfToken: "csrf",
          createdAtMs: 1_700_000_000_000,
          lastSeenAtMs: 1_700_000_000_000,
          ip: "127.0.0.1",
          userAgent: "test"
        }
        yield* sessions.create(record)
        expect(yield* sessions.find(idHash)).toEqual(Option.some(record))
        yield* sessions.chooseTenant(idHash, tenantA)
        yield* sessions.touch(idHash, 1_700_000_060_000)
        expect(yield* sessions.find(idHash)).toEqual(Option.some({ ...record, tenantId: tenantA, lastSeenAtMs: 1_700_000_060_000 }))
        yield* sessions.remove(idHash)
        expect(Option.isNone(yield* sessions.find(idHash))).toBe(true)
      }))

    it.effect("list a tenant's security events newest first, none of another tenant's, from a given time", () =>
      Effect.gen(function*() {
        const log = yield* SecurityLog
        const event = (tenantId: string | null, atMs: number, action: "sign_in" | "pat_revoked") => new SecurityEvent({
          id: randomUUID(),
          tenantId,
          at: DateTime.makeUnsafe(atMs),
          actorSub: "sub-1",
          actorEmail: "one@acme.test",
          action,
          target: null,
          ip: "127.0.0.1",
          userAgent: "test",
          detail: { tokenPrefix: "ap_pat_abc" }
        })
        const msOf = (e: SecurityEvent) => DateTime.toEpochMillis(e.at)
        yield* log.record([event(tenantA, 1_000, "sign_in"), event(tenantB, 2_000, "sign_in"), event(tenantA, 3_000, "pat_revoked"), event(null, 4_000, "sign_in")])
        const listed = yield* log.list(tenantA, { limit: 10 })
        expect(listed.map((e) => [msOf(e), e.action])).toEqual([[3_000, "pat_revoked"], [1_000, "sign_in"]])
        expect(listed[0]!.detail).toEqual({ tokenPrefix: "ap_pat_abc" })
        expect((yield* log.list(tenantA, { limit: 10, since: DateTime.makeUnsafe(2_000) })).map(msOf)).toEqual([3_000])
        // The entries of no tenant, for operators, and only those.
        yield* log.record([event(null, 5_000, "sign_in"), event(null, 500, "sign_in")])
        expect((yield* log.list(null, { limit: 10 })).map((e) => [msOf(e), e.tenantId])).toEqual([[5_000, null], [4_000, null], [500, null]])
        expect((yield* log.list(null, { limit: 10, since: DateTime.makeUnsafe(1_000) })).map(msOf)).toEqual([5_000, 4_000])
        expect((yield* log.list(null, { limit: 1 })).map(msOf)).toEqual([5_000])
      }))
  })
})
