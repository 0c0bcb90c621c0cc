import { Duration, Layer } from "effect"
import { GatewaySettings, type GatewaySettingsShape } from "../../src/Config.js"

export const testSettings = (overrides: Partial<GatewaySettingsShape> = {}): GatewaySettingsShape => ({
  publicBaseUrl: "http://localhost:8080/api/v1",
  rateLimit: { windowMs: 60_000, perToken: 5, perPartner: 600, perScimToken: 600, perAnonymousIp: 3 },
  upstreams: { referential: new URL("http://127.0.0.1:1"), provisioning: new URL("http://127.0.0.1:1") },
  provisioningAdminUrl: new URL("http://127.0.0.1:1"),
  upstreamTimeout: Duration.seconds(5),
  trustedProxyHops: 0,
  rateLimitBucket: { name: "gateway_rate_limits", timeout: Duration.millis(300), groupedLog: false },
  ...overrides
})

export const testConfigLayer = (overrides: Partial<GatewaySettingsShape> = {}) => Layer.succeed(GatewaySettings, testSettings(overrides))

export const TestSecret = "test-internal-secret-0123456789-abcdef"
