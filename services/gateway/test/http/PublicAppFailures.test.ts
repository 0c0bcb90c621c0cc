import { CreatePatRequest, CreateScimTokenRequest } from "@portfolio/domain"
import { DefaultHttpLimits, ErrorsUrl } from "@portfolio/platform/http"
import { InternalSecret } from "@portfolio/platform/security"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer, References } from "effect"
import { servePublic } from "../../src/adapters/http/PublicServer.js"
import { UpstreamForwarder } from "../../src/ports/UpstreamForwarder.js"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { ScimTokenCacheMemory } from "../../src/adapters/memory/ScimTokenCacheMemory.js"
import { RateLimitStoreMemory } from "../../src/adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { RecentlyValidTokensMemory } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemory } from "../../src/adapters/memory/rate-limit/SpentAddressesMemory.js"
import { PartnerTokensJoseWith } from "../../src/adapters/jose/PartnerTokensJose.js"
import { createPat } from "../../src/usecases/ManagePats.js"
import { createScimToken } from "../../src/usecases/ManageScimTokens.js"
import { TestOperatorCall } from "../support/OperatorCall.js"
import { GatewayStoresMemory } from "../support/UnitOfWorkMemory.js"
import { TestSigningKey } from "../support/SigningKeys.js"
import { testConfigLayer, TestSecret } from "../support/testConfig.js"

/** A forwarder that breaks in an unexpected way, standing for any bug behind the admission. */
const BrokenForwarder = Layer.succeed(
  UpstreamForwarder,
  UpstreamForwarder.of({
    forward: () => {
      throw new Error("connection pool corrupted at 10.1.2.3:5432")
    }
  })
)

const TestLive = Layer.mergeAll(
  GatewayStoresMemory,
  PartnerTokensJoseWith([TestSigningKey]).pipe(Layer.provide(testConfigLayer())),
  PatCacheMemory,
  ScimTokenCacheMemory,
  RateLimitStoreMemory,
  SpentAddressesMemory,
  RecentlyValidTokensMemory,
  BrokenForwarder,
  testConfigLayer(),
  Layer.succeed(InternalSecret, TestSecret),
  Layer.succeed(ErrorsUrl, "https://errors.example.test/api")
).pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "None")))

const call = (path: string, headers: Record<string, string>) =>
  Effect.gen(function*() {
    const address = yield* servePublic({ port: 0, host: "127.0.0.1" }, DefaultHttpLimits)
    const response = yield* Effect.promise(() => fetch(`http://127.0.0.1:${address.port}${path}`, { headers }))
    return { status: response.status, headers: response.headers, body: yield* Effect.promise(() => response.json()) }
  }).pipe(Effect.scoped)

describe("public app, unexpected failures", () => {
  layer(TestLive)((it) => {
    it.effect("answers a bare 500 problem that names nothing internal, with the rate-limit headers and request id", () =>
      Effect.gen(function*() {
        const { token } = yield* createPat(
          new CreatePatRequest({ tenantId: "1e2d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b", userSub: "s", email: "s@example.com", role: "viewer", scope: "read", days: 1 }),
          TestOperatorCall
        )
        const answer = yield* call("/api/v1/referentiel/functions", { authorization: `Bearer ${token}`, "x-request-id": "req-42" })
        expect(answer.status).toBe(500)
        expect(answer.body).toEqual({
          type: "https://errors.example.test/api/internal",
          title: "Internal error",
          status: 500,
          detail: "An internal error occurred. It has been logged.",
          instance: "/api/v1/referentiel/functions",
          errorCode: "INTERNAL"
        })
        expect(answer.headers.get("content-type")).toBe("application/problem+json")
        expect(answer.headers.get("x-request-id")).toBe("req-42")
        // Counted once, by its token: the failure does not count it a second time.
        expect(answer.headers.get("x-ratelimit-limit")).toBe("5")
        expect(answer.headers.get("x-ratelimit-remaining")).toBe("4")
        expect(answer.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/)
      }))

    it.effect("answers that 500 as a SCIM error under /api/v1/scim/v2, with the same headers", () =>
      Effect.gen(function*() {
        const { token } = yield* createScimToken("2f3e4d5c-6b7a-4988-8a7b-6c5d4e3f2a1b", new CreateScimTokenRequest({ label: "Okta" }), TestOperatorCall)
        const answer = yield* call("/api/v1/scim/v2/Users", { authorization: `Bearer ${token}`, "x-request-id": "req-43" })
        expect(answer.status).toBe(500)
        expect(answer.headers.get("content-type")).toBe("application/scim+json")
        expect(answer.body).toEqual({
          schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
          status: "500",
          detail: "An internal error occurred. It has been logged."
        })
        expect(answer.headers.get("x-request-id")).toBe("req-43")
        // Counted once, by the SCIM token, under its own limit.
        expect(answer.headers.get("x-ratelimit-limit")).toBe("600")
        expect(answer.headers.get("x-ratelimit-remaining")).toBe("599")
      }))
  })
})
