import { CallerIdentity, CreatePatRequest, CreateScimTokenRequest, PublicApi } from "@portfolio/domain"
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { rejectionHeaders } from "../../src/adapters/http/RejectionHeaders.js"
import { PartnerTokensJoseWith } from "../../src/adapters/jose/PartnerTokensJose.js"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { ScimTokenCacheMemory } from "../../src/adapters/memory/ScimTokenCacheMemory.js"
import { RateLimitStoreMemory } from "../../src/adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { RecentlyValidTokensMemory } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemory } from "../../src/adapters/memory/rate-limit/SpentAddressesMemory.js"
import { generatePat } from "../../src/domain/Pat.js"
import { rateLimitHeaders } from "../../src/domain/rate-limit/RateLimitWindow.js"
import { allowListOf } from "../../src/domain/AllowList.js"
import { admissionAttributes, admitRequest, type PublicCall } from "../../src/usecases/AdmitRequest.js"
import { createScimToken, revokeScimToken } from "../../src/usecases/ManageScimTokens.js"
import { generateScimToken } from "../../src/domain/ScimToken.js"
import { ScimTokenRepositoryMemory } from "../support/ScimTokenRepositoryMemory.js"
import { createPat, revokePat } from "../../src/usecases/ManagePats.js"
import { PatRepositoryMemory } from "../support/PatRepositoryMemory.js"
import { PartnerTokens } from "../../src/ports/PartnerTokens.js"
import { TestOperatorCall } from "../support/OperatorCall.js"
import { GatewayStoresMemory } from "../support/UnitOfWorkMemory.js"
import { TestSigningKey } from "../support/SigningKeys.js"
import { testConfigLayer } from "../support/testConfig.js"

const allowList = allowListOf(PublicApi)
const tenantId = "6a2b9a58-3f0e-4c55-9a53-0b5f0a8f1c11"

const testLayer = () =>
  Layer.mergeAll(GatewayStoresMemory, PatCacheMemory, ScimTokenCacheMemory, RateLimitStoreMemory, SpentAddressesMemory, RecentlyValidTokensMemory, PartnerTokensJoseWith([TestSigningKey])).pipe(
    Layer.provideMerge(testConfigLayer({ rateLimit: { windowMs: 60_000, perToken: 3, perPartner: 600, perScimToken: 4, perAnonymousIp: 2 } }))
  )

/** A call as the public server reads it, its route matched on the allow-list. */
const call = (overrides: Partial<Omit<PublicCall, "route">> & { token?: string }): PublicCall => {
  const read = {
    method: "GET",
    path: "/api/v1/referentiel/applications",
    authorization: overrides.token === undefined ? undefined : `Bearer ${overrides.token}`,
    clientIp: "192.0.2.10",
    ...overrides
  }
  return { ...read, route: allowList.match(read.method, read.path) }
}

const issue = (role: CreatePatRequest["role"], scope: CreatePatRequest["scope"], days = 90) =>
  createPat(new CreatePatRequest({ tenantId, userSub: `sub-${role}-${scope}`, email: `${role}@example.com`, role, scope, days }), TestOperatorCall)

describe("admission: authenticate -> rate limit -> route -> scope -> role", () => {
  const admit = admitRequest
  /** `tag: detail` of a refusal, or "admitted". */
  const outcomeOf = (c: PublicCall) =>
    Effect.map(admit(c), (v) => Result.match(v.outcome, { onFailure: (e) => `${e._tag}: ${e.detail}`, onSuccess: () => "admitted" }))

  layer(testLayer())((it) => {
    it.effect("refuses every malformed Authorization header with 401, without a store lookup", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const ip = (n: number) => `198.51.100.${n}`
        const valid = generatePat().token
        const cases: Array<[string | undefined, string]> = [
          [undefined, "Unauthenticated: The request has no Authorization header; send 'Authorization: Bearer <personal access token>'."],
          ["", "Unauthenticated: The request has no Authorization header; send 'Authorization: Bearer <personal access token>'."],
          ["Bearer", "Unauthenticated: The Authorization header has the Bearer scheme but no token."],
          ["Bearer    ", "Unauthenticated: The Authorization header has the Bearer scheme but no token."],
          [`Basic ${valid}`, "Unauthenticated: The Authorization header must use the Bearer scheme."],
          [`Bearer ${valid} extra`, "Unauthenticated: The Authorization header must hold exactly one token after 'Bearer'."],
          ["Bearer ap_pat_short", "Unauthenticated: The token is not a well-formed personal access token."],
          [`Bearer ${valid.slice(0, -1)}${valid.endsWith("0") ? "1" : "0"}`, "Unauthenticated: The token is not a well-formed personal access token."]
        ]
        for (const [i, [authorization, expected]] of cases.entries()) {
          expect(yield* outcomeOf(call({ authorization, clientIp: ip(i) }))).toBe(expected)
        }
        expect(yield* memory.lookups).toBe(0)
        expect(yield* outcomeOf(call({ authorization: `bearer ${valid}`, clientIp: ip(99) }))).toBe("Unauthenticated: The token is not recognised.")
        expect(yield* memory.lookups).toBe(1)
      }))

    it.effect("counts requests without a valid token per client address, and answers 429 past the limit", () =>
      Effect.gen(function*() {
        const c = call({ clientIp: "203.0.113.7", token: generatePat().token })
        const first = yield* admit(c)
        expect(first.window).toMatchObject({ allowed: true, limit: 2, remaining: 1 })
        expect((yield* admit(c)).window).toMatchObject({ allowed: true, remaining: 0 })
        const third = yield* admit(c)
        expect(third.window).toMatchObject({ allowed: false, limit: 2, remaining: 0 })
        expect(Result.getFailure(third.outcome).pipe((e) => e._tag === "Some" && e.value._tag)).toBe("RateLimited")
      }))
  })

  layer(testLayer())((it) => {
    it.effect("refuses an address over its limit before looking any of its tokens up", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const flooder = "203.0.113.66"
        const forged = () => call({ token: generatePat().token, clientIp: flooder })
        const spentAt = yield* Clock.currentTimeMillis
        for (let i = 0; i < 2; i++) expect(yield* outcomeOf(forged())).toBe("Unauthenticated: The token is not recognised.")
        yield* TestClock.adjust("10 seconds")
        const verified = (yield* issue("viewer", "read")).token
        expect(yield* outcomeOf(call({ token: verified, clientIp: "198.51.100.1" }))).toBe("admitted")
        const lookups = yield* memory.lookups
        for (let i = 0; i < 50; i++) {
          const v = yield* admit(forged())
          const error = Result.getFailure(v.outcome)
          expect(error._tag === "Some" && error.value._tag).toBe("RateLimited")
          // The address's own window: full since `spentAt`, room again 60 s later, Retry-After agreeing.
          const headers = { ...rateLimitHeaders(v.window), ...(error._tag === "Some" ? rejectionHeaders(error.value, v.window, v.decidedAtMs) : {}) }
          expect(headers).toEqual({
            "x-ratelimit-limit": "2",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": String((spentAt + 60_000) / 1000),
            "retry-after": "50"
          })
        }
        expect(yield* memory.lookups).toBe(lookups)

        // A token verified lately has its own budget, from the cache or, once the cache has let it
        // go, from the store; one never verified here waits for the address's window.
        expect(yield* outcomeOf(call({ token: verified, clientIp: flooder }))).toBe("admitted")
        expect(yield* memory.lookups).toBe(lookups)
        yield* TestClock.adjust("2 seconds")
        expect(yield* outcomeOf(call({ token: verified, clientIp: flooder }))).toBe("admitted")
        expect(yield* memory.lookups).toBe(lookups + 1)
        const unverified = (yield* issue("viewer", "read")).token
        expect(yield* outcomeOf(call({ token: unverified, clientIp: flooder }))).toMatch(/^RateLimited: This client address made 2 requests/)
        expect(yield* memory.lookups).toBe(lookups + 1)
        yield* TestClock.adjust("48 seconds")
        expect(yield* outcomeOf(call({ token: unverified, clientIp: flooder }))).toBe("admitted")
        expect(yield* memory.lookups).toBe(lookups + 2)
      }))
  })

  layer(testLayer())((it) => {
    it.effect("answers 404 for a valid token on a path or method outside the public list, after counting it", () =>
      Effect.gen(function*() {
        const { token } = yield* issue("viewer", "read")
        const v = yield* admit(call({ token, method: "POST", path: "/api/v1/referentiel/applications" }))
        expect(v.window).toMatchObject({ allowed: true, limit: 3, remaining: 2 })
        expect(Result.getFailure(v.outcome).pipe((e) => e._tag === "Some" && `${e.value._tag}: ${e.value.detail}`)).toBe(
          "NotFound: POST /api/v1/referentiel/applications is not an endpoint of the public API."
        )
        expect(yield* outcomeOf(call({ token, path: "/api/v1/admin/pats" }))).toMatch(/^NotFound/)
        expect(yield* outcomeOf(call({ token }))).toBe("admitted")
        // Over the limit the 429 wins over the 404.
        expect(yield* outcomeOf(call({ token, path: "/api/v1/nothing-here" }))).toMatch(/^RateLimited: This token made 3 requests/)
      }))

    it.effect("checks the scope before the role, and the role of provisioning endpoints", () =>
      Effect.gen(function*() {
        const readAdmin = (yield* issue("tenant-admin", "read")).token
        const writeArchitect = (yield* issue("architect", "write")).token
        const writeAdmin = (yield* issue("tenant-admin", "write")).token
        expect(yield* outcomeOf(call({ token: readAdmin, method: "POST", path: "/api/v1/tenant/invitations" }))).toBe(
          "InsufficientScope: token scope 'read' does not allow POST /tenant/invitations, which requires 'write'"
        )
        expect(yield* outcomeOf(call({ token: writeArchitect, path: "/api/v1/tenant/invitations/members" }))).toBe(
          "InsufficientScope: GET /tenant/invitations/members requires the token holder to have the role 'tenant-admin' in the tenant; the holder has 'architect'"
        )
        expect(yield* outcomeOf(call({ token: writeArchitect, path: "/api/v1/referentiel/functions/stats" }))).toBe("admitted")
        const admitted = yield* admit(call({ token: writeAdmin, method: "DELETE", path: "/api/v1/tenant/invitations/members/auth0%7C1" }))
        const right = Result.getOrThrow(admitted.outcome)
        expect(right.route.operationId).toBe("invitations.removeMember")
        expect(right.route.upstream).toBe("provisioning")
        expect(right.caller).toEqual(new CallerIdentity({ tenantId, subject: "sub-tenant-admin-write", role: "tenant-admin", scope: "write" }))
      }))
  })

  layer(testLayer())((it) => {
    it.effect("authenticates before routing: no token on an unknown path is 401, not 404", () =>
      Effect.gen(function*() {
        expect(yield* outcomeOf(call({ path: "/api/v1/admin/pats", method: "POST" }))).toMatch(/^Unauthenticated/)
      }))

    it.effect("refuses expired and revoked tokens, revocation taking effect at once despite the cache", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const short = yield* issue("viewer", "read", 1)
        const other = yield* issue("contributor", "read")
        expect(yield* outcomeOf(call({ token: short.token, clientIp: "a" }))).toBe("admitted")
        yield* TestClock.adjust("1 days")
        expect(yield* outcomeOf(call({ token: short.token, clientIp: "a" }))).toBe(
          "Unauthenticated: The token expired at 1970-01-02T00:00:00.000Z."
        )

        expect(yield* outcomeOf(call({ token: other.token }))).toBe("admitted")
        const lookupsBefore = yield* memory.lookups
        expect(yield* outcomeOf(call({ token: other.token }))).toBe("admitted")
        expect(yield* memory.lookups).toBe(lookupsBefore) // served from the cache
        yield* revokePat(other.id, TestOperatorCall)
        expect(yield* outcomeOf(call({ token: other.token }))).toBe("Unauthenticated: The token has been revoked.")
      }))

    it.effect("keeps a verification for at most one second", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const { token } = yield* issue("viewer", "write")
        yield* outcomeOf(call({ token }))
        const after = yield* memory.lookups
        yield* TestClock.adjust("999 millis")
        yield* outcomeOf(call({ token }))
        expect(yield* memory.lookups).toBe(after)
        yield* TestClock.adjust("1 millis")
        yield* outcomeOf(call({ token }))
        expect(yield* memory.lookups).toBe(after + 1)
      }))

    it.effect("answers 503 when the token store is down, counting the call against the address", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const { token } = yield* issue("viewer", "write")
        yield* memory.setDown(true)
        const v = yield* admit(call({ token, clientIp: "down-test" }))
        yield* memory.setDown(false)
        expect(v.window).toMatchObject({ limit: 2, remaining: 1 })
        expect(Result.getFailure(v.outcome).pipe((e) => e._tag === "Some" && e.value._tag)).toBe("Unavailable")
      }))
  })
})

/** A token of a tenant of its own: a tenant holds two at most. */
const makeScimToken = (label = "Okta") => createScimToken(randomUUID(), new CreateScimTokenRequest({ label }), TestOperatorCall)

const scimUsers = (token: string | undefined, overrides: Partial<Omit<PublicCall, "route">> = {}) =>
  call({ path: "/api/v1/scim/v2/Users", ...(token === undefined ? {} : { token }), ...overrides })

describe("admission of SCIM tokens", () => {
  const admit = admitRequest
  const outcomeOf = (c: PublicCall) =>
    Effect.map(admit(c), (v) => Result.match(v.outcome, { onFailure: (e) => `${e._tag}: ${e.detail}`, onSuccess: () => "admitted" }))

  layer(testLayer())((it) => {
    it.effect("admits a SCIM token on the SCIM endpoints, asserting its tenant as the caller scim:<id> with the role scim", () =>
      Effect.gen(function*() {
        const made = yield* makeScimToken()
        const calls = [["GET", "/api/v1/scim/v2/Users"], ["POST", "/api/v1/scim/v2/Users"], ["DELETE", `/api/v1/scim/v2/Users/${made.id}`]] as const
        for (const [method, path] of calls) {
          const verdict = yield* admit(call({ token: made.token, method, path }))
          const admitted = Result.getOrThrow(verdict.outcome)
          expect(admitted.route.upstream).toBe("provisioning")
          expect(admitted.caller).toEqual(new CallerIdentity({ tenantId: made.tenantId, subject: `scim:${made.id}`, role: "scim", scope: "write" }))
          expect(admissionAttributes(call({ token: made.token, method, path }), admitted.credential)).toMatchObject({ "scim_token.prefix": made.tokenPrefix })
        }
      }))

    it.effect("refuses a PAT and a partner's token on SCIM endpoints (403), and a SCIM token anywhere else (403)", () =>
      Effect.gen(function*() {
        const admin = (yield* issue("tenant-admin", "write")).token
        const { token: partner } = yield* (yield* PartnerTokens).issue({ clientId: "service-partner-idp", tenantId, scope: "write" }, yield* Clock.currentTimeMillis)
        expect(yield* outcomeOf(scimUsers(admin))).toBe(
          "InsufficientScope: GET /scim/v2/Users is a SCIM endpoint: it takes a SCIM token (ap_scim_…) made by a tenant-admin, not a personal access token"
        )
        expect(yield* outcomeOf(scimUsers(partner, { method: "POST" }))).toBe(
          "InsufficientScope: POST /scim/v2/Users is a SCIM endpoint: it takes a SCIM token (ap_scim_…) made by a tenant-admin, not a partner client's access token"
        )
        const { token } = yield* makeScimToken()
        for (const path of ["/api/v1/referentiel/applications", "/api/v1/tenant/invitations/members"]) {
          expect(yield* outcomeOf(call({ token, path }))).toBe(
            `InsufficientScope: a SCIM token is accepted only under /api/v1/scim/v2; GET ${path.slice("/api/v1".length)} takes a personal access token or a partner client's access token`
          )
        }
      }))

    it.effect("answers 404 for Groups, naming where roles are set, once authenticated", () =>
      Effect.gen(function*() {
        const { token } = yield* makeScimToken()
        const groups = "NotFound: Groups are not supported: roles are set per User, in its 'roles' attribute (see /ResourceTypes)."
        expect(yield* outcomeOf(scimUsers(token, { path: "/api/v1/scim/v2/Groups" }))).toBe(groups)
        expect(yield* outcomeOf(scimUsers(token, { path: "/api/v1/scim/v2/Groups/7", method: "PATCH" }))).toBe(groups)
        expect(yield* outcomeOf(scimUsers(undefined, { path: "/api/v1/scim/v2/Groups", clientIp: "192.0.2.77" }))).toMatch(/^Unauthenticated/)
      }))
  })

  layer(testLayer())((it) => {
    it.effect("refuses unknown, malformed and revoked SCIM tokens (401), revocation taking effect at once despite the cache", () =>
      Effect.gen(function*() {
        const memory = yield* ScimTokenRepositoryMemory
        const ip = (n: number) => `198.51.100.${n}`
        expect(yield* outcomeOf(scimUsers(generateScimToken().token, { clientIp: ip(1) }))).toBe("Unauthenticated: The token is not recognised.")
        const lookups = yield* memory.lookups
        const valid = generateScimToken().token
        for (const [i, malformed] of ["ap_scim_short", `${valid.slice(0, -1)}${valid.endsWith("0") ? "1" : "0"}`].entries()) {
          expect(yield* outcomeOf(scimUsers(malformed, { clientIp: ip(10 + i) }))).toBe("Unauthenticated: The token is not a well-formed SCIM token.")
        }
        expect(yield* memory.lookups).toBe(lookups)

        const made = yield* makeScimToken()
        expect(yield* outcomeOf(scimUsers(made.token))).toBe("admitted")
        const cached = yield* memory.lookups
        expect(yield* outcomeOf(scimUsers(made.token))).toBe("admitted")
        expect(yield* memory.lookups).toBe(cached)
        yield* revokeScimToken(made.tenantId, made.id, TestOperatorCall)
        expect(yield* outcomeOf(scimUsers(made.token, { clientIp: ip(20) }))).toBe("Unauthenticated: The SCIM token has been revoked.")
      }))

    it.effect("keeps a verification for one second, and marks the last use to the minute", () =>
      Effect.gen(function*() {
        const memory = yield* ScimTokenRepositoryMemory
        const made = yield* makeScimToken()
        const lastUsed = Effect.map(memory.get(made.id), (r) => Option.getOrThrow(r).lastUsedAt)
        yield* outcomeOf(scimUsers(made.token))
        const after = yield* memory.lookups
        const first = yield* lastUsed
        expect(first).not.toBeNull()
        yield* TestClock.adjust("999 millis")
        yield* outcomeOf(scimUsers(made.token))
        expect(yield* memory.lookups).toBe(after)
        yield* TestClock.adjust("1 millis")
        yield* outcomeOf(scimUsers(made.token))
        expect(yield* memory.lookups).toBe(after + 1)
        expect(yield* lastUsed).toEqual(first)
        yield* TestClock.adjust("1 minutes")
        yield* outcomeOf(scimUsers(made.token))
        expect(yield* lastUsed).not.toEqual(first)
      }))

    it.effect("counts a SCIM token in its own window, under its own limit (4 here; a PAT's is 3)", () =>
      Effect.gen(function*() {
        const { token } = yield* makeScimToken()
        const windows = []
        for (let i = 0; i < 5; i++) windows.push((yield* admit(scimUsers(token))).window)
        expect(windows.map((w) => [w.allowed, w.limit, w.remaining])).toEqual([[true, 4, 3], [true, 4, 2], [true, 4, 1], [true, 4, 0], [false, 4, 0]])
        expect(yield* outcomeOf(scimUsers(token))).toMatch(/^RateLimited: This SCIM token made 4 requests in the last 60 seconds/)
        // Another token of the tenant has a window of its own.
        expect(yield* outcomeOf(scimUsers((yield* makeScimToken("Entra ID")).token))).toBe("admitted")
      }))
  })
})
