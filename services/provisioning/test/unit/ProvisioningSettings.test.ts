import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { ProvisioningSettings } from "../../src/Config.js"

const read = (environment: Record<string, string>) =>
  Effect.flatMap(ProvisioningSettings, Effect.succeed).pipe(
    Effect.provide(ProvisioningSettings.layer),
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(environment))
  )

describe("provisioning settings", () => {
  it.effect("takes the magic links' base from PUBLIC_ACCEPT_URL, else PUBLIC_URL + /accept, else localhost:<PORT>/accept", () =>
    Effect.gen(function*() {
      const both = { PUBLIC_ACCEPT_URL: "https://join.example.com/welcome/", PUBLIC_URL: "https://portfolio.example.com" }
      expect((yield* read(both)).acceptUrl).toBe("https://join.example.com/welcome")
      expect((yield* read({ PUBLIC_URL: "https://portfolio.example.com/prov//" })).acceptUrl).toBe("https://portfolio.example.com/prov/accept")
      expect((yield* read({ PORT: "9100" })).acceptUrl).toBe("http://localhost:9100/accept")
      expect((yield* read({})).acceptUrl).toBe("http://localhost:8084/accept")
      expect(String(yield* Effect.flip(read({ PUBLIC_URL: "not a url" })))).toContain("PUBLIC_URL")
    }))

  it.effect("allows 100 invitations per tenant per hour by default and refuses a limit below 1", () =>
    Effect.gen(function*() {
      expect((yield* read({})).invitationsPerTenantPerHour).toBe(100)
      expect((yield* read({ INVITATIONS_PER_TENANT_PER_HOUR: "1" })).invitationsPerTenantPerHour).toBe(1)
      for (const bad of ["0", "-5"]) {
        expect(String(yield* Effect.flip(read({ INVITATIONS_PER_TENANT_PER_HOUR: bad })))).toBe(
          "(Invalid data at INVITATIONS_PER_TENANT_PER_HOUR: \"must be at least 1\")"
        )
      }
      expect(String(yield* Effect.flip(read({ INVITATIONS_PER_TENANT_PER_HOUR: "many" })))).toContain("INVITATIONS_PER_TENANT_PER_HOUR")
    }))

  it.effect("trusts no proxy's X-Forwarded-For by default, and refuses a negative TRUSTED_PROXY_HOPS", () =>
    Effect.gen(function*() {
      expect((yield* read({})).trustedProxyHops).toBe(0)
      expect((yield* read({ TRUSTED_PROXY_HOPS: "2" })).trustedProxyHops).toBe(2)
      expect(String(yield* Effect.flip(read({ TRUSTED_PROXY_HOPS: "-1" })))).toBe("(Invalid data at TRUSTED_PROXY_HOPS: \"must be 0 or more\")")
    }))
})
