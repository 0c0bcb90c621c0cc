import { DefaultPorts, integerAtLeast, listenSettings } from "@portfolio/platform"
import { Config, ConfigError, Context, Duration, Either, Layer, Option } from "effect"

export interface RateLimitPolicy {
  readonly windowMs: number
  /** Per PAT. */
  readonly perToken: number
  /** Per client IP, for requests without a valid token and for the documentation pages. */
  readonly perAnonymousIp: number
}

export interface GatewaySettings {
  /** Public base URL with the /api/v1 prefix, as documented in the OpenAPI `servers`. */
  readonly publicBaseUrl: string
  readonly rateLimit: RateLimitPolicy
  readonly upstreams: { readonly referential: URL; readonly provisioning: URL }
  readonly upstreamTimeout: Duration.Duration
  /** Hops of trusted reverse proxies in front of the gateway whose X-Forwarded-For entries count. */
  readonly trustedProxyHops: number
}

const parseHttpUrl = (value: string): URL | undefined => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined
  } catch {
    return undefined
  }
}

const httpUrl = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((value) => {
      const url = parseHttpUrl(value)
      return url === undefined
        ? Either.left(ConfigError.InvalidData([name], `must be an absolute http(s) URL, got '${value}'`))
        : Either.right(url)
    })
  )

const positiveInt = (name: string, fallback: number) => integerAtLeast(name, 1, fallback, "must be a positive integer")

export const gatewaySettingsConfig: Config.Config<GatewaySettings> = Config.all({
  listen: listenSettings("gateway", "api"),
  publicBaseUrl: Config.option(Config.string("PUBLIC_BASE_URL")),
  perToken: positiveInt("RATE_LIMIT_PER_MINUTE", 180),
  perAnonymousIp: positiveInt("UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE", 60),
  referential: httpUrl("REFERENTIAL_URL", `http://127.0.0.1:${DefaultPorts.referential.api}`),
  provisioning: httpUrl("PROVISIONING_URL", `http://127.0.0.1:${DefaultPorts.provisioning.api}`),
  upstreamTimeout: Config.duration("UPSTREAM_TIMEOUT").pipe(Config.withDefault(Duration.seconds(25))),
  trustedProxyHops: integerAtLeast("TRUSTED_PROXY_HOPS", 0, 0, "must be 0 or more")
}).pipe(
  Config.map((c) => ({
    publicBaseUrl: Option.getOrElse(c.publicBaseUrl, () => `http://localhost:${c.listen.port}/api/v1`).replace(/\/+$/, ""),
    rateLimit: { windowMs: 60_000, perToken: c.perToken, perAnonymousIp: c.perAnonymousIp },
    upstreams: { referential: c.referential, provisioning: c.provisioning },
    upstreamTimeout: c.upstreamTimeout,
    trustedProxyHops: c.trustedProxyHops
  }))
)

export class GatewayConfig extends Context.Tag("@portfolio/gateway/GatewayConfig")<GatewayConfig, GatewaySettings>() {
  static readonly layer = Layer.effect(GatewayConfig, gatewaySettingsConfig)
}

/**
 * Where the rate-limit windows are counted (`RATE_LIMIT_STORE`): `jetstream`, shared by every
 * replica; `memory`, in this process only (a single local replica, no shared bucket).
 */
export const rateLimitStoreKind = Config.literal("jetstream", "memory")("RATE_LIMIT_STORE").pipe(Config.withDefault("jetstream" as const))

/**
 * Gateway replicas sharing the rate-limit bucket (`GATEWAY_REPLICAS`, 1 by default): while the
 * bucket does not answer, each replica admits ceil(limit / replicas) per key per window, so that
 * together they stay near the limit; while it answers, it sizes the room each replica reserves for
 * requests it admits with no round trip (docs/security.md, "Rate limiting across replicas"). Set it
 * to the most replicas that may run at once (an autoscaler's maximum); fewer than run makes the
 * degraded bound looser and the reservations larger, more makes both stricter.
 */
export const gatewayReplicas = integerAtLeast("GATEWAY_REPLICAS", 1, 1, "must be a positive integer")
