import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Result } from "effect"
import { gatewayReplicas, gatewaySettingsConfig } from "../../src/Config.js"

const load = (env: Record<string, string>) =>
  Effect.result(Effect.provideService(gatewaySettingsConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))

describe("gateway configuration", () => {
  it.effect("defaults to the documented ports, limits and upstreams", () =>
    Effect.gen(function*() {
      const settings = Result.getOrThrow(yield* load({}))
      expect(settings.publicBaseUrl).toBe("http://localhost:8080/api/v1")
      expect(settings.rateLimit).toEqual({ windowMs: 60_000, perToken: 180, perPartner: 600, perScimToken: 600, perAnonymousIp: 60 })
      expect(settings.upstreams.referential.href).toBe("http://127.0.0.1:8082/")
      expect(settings.upstreams.provisioning.href).toBe("http://127.0.0.1:8084/")
      expect(Duration.toMillis(settings.upstreamTimeout)).toBe(25_000)
      expect(settings.trustedProxyHops).toBe(0)
      expect(settings.rateLimitBucket).toEqual({ name: "gateway_rate_limits", timeout: Duration.millis(300), groupedLog: false })
    }))

  it.effect("reads the rate-limit bucket's name, wait and log format", () =>
    Effect.gen(function*() {
      const settings = Result.getOrThrow(
        yield* load({ RATE_LIMIT_BUCKET: "rate-limits_2", RATE_LIMIT_STORE_TIMEOUT: "2 seconds", RATE_LIMIT_GROUPED_LOG: "true" })
      )
      expect(settings.rateLimitBucket).toEqual({ name: "rate-limits_2", timeout: Duration.seconds(2), groupedLog: true })
    }))

  it.effect("reads the SCIM token's own limit from SCIM_RATE_LIMIT_PER_MINUTE, leaving the others alone", () =>
    Effect.gen(function*() {
      const settings = Result.getOrThrow(yield* load({ SCIM_RATE_LIMIT_PER_MINUTE: "1200" }))
      expect(settings.rateLimit).toEqual({ windowMs: 60_000, perToken: 180, perPartner: 600, perScimToken: 1200, perAnonymousIp: 60 })
    }))

  it.effect("follows PORT in the default base URL and trims a trailing slash of PUBLIC_BASE_URL", () =>
    Effect.gen(function*() {
      expect(Result.getOrThrow(yield* load({ PORT: "9090" })).publicBaseUrl).toBe("http://localhost:9090/api/v1")
      expect(Result.getOrThrow(yield* load({ PUBLIC_BASE_URL: "https://api.example.com/api/v1/" })).publicBaseUrl).toBe(
        "https://api.example.com/api/v1"
      )
    }))

  it.effect("refuses bad values with a message naming the variable", () =>
    Effect.gen(function*() {
      for (const [env, fragment] of [
        [{ REFERENTIAL_URL: "not a url" }, "REFERENTIAL_URL"],
        [{ PROVISIONING_URL: "ftp://x" }, "PROVISIONING_URL"],
        [{ RATE_LIMIT_PER_MINUTE: "0" }, "RATE_LIMIT_PER_MINUTE"],
        [{ UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: "many" }, "UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE"],
        [{ SCIM_RATE_LIMIT_PER_MINUTE: "0" }, "SCIM_RATE_LIMIT_PER_MINUTE"],
        [{ UPSTREAM_TIMEOUT: "soon" }, "UPSTREAM_TIMEOUT"],
        [{ TRUSTED_PROXY_HOPS: "-1" }, "TRUSTED_PROXY_HOPS"],
        [{ RATE_LIMIT_BUCKET: "rate.limits" }, "must be letters, digits, '-' or '_'"],
        [{ RATE_LIMIT_STORE_TIMEOUT: "soon" }, "RATE_LIMIT_STORE_TIMEOUT"],
        [{ RATE_LIMIT_GROUPED_LOG: "maybe" }, "RATE_LIMIT_GROUPED_LOG"]
      ] as const) {
        const result = yield* load(env)
        expect(Result.isFailure(result), JSON.stringify(env)).toBe(true)
        expect(String(Result.getFailure(result).pipe((e) => e._tag === "Some" ? e.value : ""))).toContain(fragment)
      }
    }))

  it.effect("reads GATEWAY_REPLICAS, the divisor of the degraded rate limit: 1 by default, a positive integer", () =>
    Effect.gen(function*() {
      const replicas = (env: Record<string, string>) =>
        Effect.result(Effect.provideService(gatewayReplicas, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
      expect(Result.getOrThrow(yield* replicas({}))).toBe(1)
      expect(Result.getOrThrow(yield* replicas({ GATEWAY_REPLICAS: "3" }))).toBe(3)
      for (const value of ["0", "two", "-1"]) {
        const refused = yield* replicas({ GATEWAY_REPLICAS: value })
        expect(Result.isFailure(refused) && String(refused.failure)).toContain("GATEWAY_REPLICAS")
      }
    }))
})
