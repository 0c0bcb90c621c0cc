import { booleanSetting, DefaultPorts, durationSetting, integerAtLeast, invalidSetting, parsedSetting } from "@portfolio/platform/config"
import { listenSettings } from "@portfolio/platform/http"
import { Config, Context, Duration, Effect, Layer, Option, Redacted, Result } from "effect"
import { createPrivateKey } from "node:crypto"

export interface RateLimitPolicy {
  readonly windowMs: number
  /** Per PAT. */
  readonly perToken: number
  /** Per partner client, whatever token it presents. */
  readonly perPartner: number
  /** Per SCIM token: an identity tool's first synchronisation of a large tenant reads and writes in bursts (docs/scim.md). */
  readonly perScimToken: number
  /** Per client IP, for requests without a valid token and for the documentation pages. */
  readonly perAnonymousIp: number
}

export interface GatewaySettingsShape {
  /** Public base URL with the /api/v1 prefix, as documented in the OpenAPI `servers`. */
  readonly publicBaseUrl: string
  readonly rateLimit: RateLimitPolicy
  readonly upstreams: { readonly referential: URL; readonly provisioning: URL }
  /** Provisioning's admin API, where the members of a tenant are read before a PAT request's approval. */
  readonly provisioningAdminUrl: URL
  readonly upstreamTimeout: Duration.Duration
  /** Hops of trusted reverse proxies in front of the gateway whose X-Forwarded-For entries count. */
  readonly trustedProxyHops: number
  /** The JetStream key-value bucket of the rate-limit windows, used when `RATE_LIMIT_STORE=jetstream`. */
  readonly rateLimitBucket: {
    /** `RATE_LIMIT_BUCKET`: the bucket's name, created if absent. */
    readonly name: string
    /** `RATE_LIMIT_STORE_TIMEOUT`: the longest a request waits on the bucket before it is counted in process. */
    readonly timeout: Duration.Duration
    /** `RATE_LIMIT_GROUPED_LOG`: bounded stored logs, older entries grouped (docs/security.md, "Rate limiting across replicas"). */
    readonly groupedLog: boolean
  }
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
  Config.String(name).pipe(
    Config.withDefault(fallback),
    Config.mapEffect((value) => {
      const url = parseHttpUrl(value)
      return url === undefined ? Effect.fail(invalidSetting(name, `must be an absolute http(s) URL, got '${value}'`)) : Effect.succeed(url)
    })
  )

const positiveInt = (name: string, fallback: number) => integerAtLeast(name, 1, fallback, "must be a positive integer")

const DefaultRateLimitBucket = "gateway_rate_limits"

const rateLimitBucketName = Config.String("RATE_LIMIT_BUCKET").pipe(
  Config.withDefault(DefaultRateLimitBucket),
  Config.mapEffect((name) =>
    /^[-\w]+$/.test(name) ? Effect.succeed(name) : Effect.fail(invalidSetting("RATE_LIMIT_BUCKET", "must be letters, digits, '-' or '_'")))
)

export const gatewaySettingsConfig: Config.Config<GatewaySettingsShape> = Config.all({
  listen: listenSettings("gateway", "api"),
  publicBaseUrl: Config.option(Config.String("PUBLIC_BASE_URL")),
  perToken: positiveInt("RATE_LIMIT_PER_MINUTE", 180),
  perAnonymousIp: positiveInt("UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE", 60),
  perPartner: positiveInt("PARTNER_RATE_LIMIT_PER_MINUTE", 600),
  perScimToken: positiveInt("SCIM_RATE_LIMIT_PER_MINUTE", 600),
  referential: httpUrl("REFERENTIAL_URL", `http://127.0.0.1:${DefaultPorts.referential.api}`),
  provisioning: httpUrl("PROVISIONING_URL", `http://127.0.0.1:${DefaultPorts.provisioning.api}`),
  provisioningAdmin: httpUrl("PROVISIONING_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.provisioning.admin}`),
  upstreamTimeout: durationSetting("UPSTREAM_TIMEOUT").pipe(Config.withDefault(Duration.seconds(25))),
  trustedProxyHops: integerAtLeast("TRUSTED_PROXY_HOPS", 0, 0, "must be 0 or more"),
  rateLimitBucket: rateLimitBucketName,
  rateLimitStoreTimeout: durationSetting("RATE_LIMIT_STORE_TIMEOUT").pipe(Config.withDefault(Duration.millis(300))),
  rateLimitGroupedLog: booleanSetting("RATE_LIMIT_GROUPED_LOG").pipe(Config.withDefault(false))
}).pipe(
  Config.map((c) => ({
    publicBaseUrl: Option.getOrElse(c.publicBaseUrl, () => `http://localhost:${c.listen.port}/api/v1`).replace(/\/+$/, ""),
    rateLimit: { windowMs: 60_000, perToken: c.perToken, perPartner: c.perPartner, perScimToken: c.perScimToken, perAnonymousIp: c.perAnonymousIp },
    upstreams: { referential: c.referential, provisioning: c.provisioning },
    provisioningAdminUrl: c.provisioningAdmin,
    upstreamTimeout: c.upstreamTimeout,
    trustedProxyHops: c.trustedProxyHops,
    rateLimitBucket: { name: c.rateLimitBucket, timeout: c.rateLimitStoreTimeout, groupedLog: c.rateLimitGroupedLog }
  }))
)

export class GatewaySettings extends Context.Service<GatewaySettings, GatewaySettingsShape>()("@portfolio/gateway/GatewaySettings") {
  static readonly layer = Layer.effect(GatewaySettings, gatewaySettingsConfig)
}

/**
 * Where the rate-limit windows are counted (`RATE_LIMIT_STORE`): `jetstream`, shared by every
 * replica; `memory`, in this process only (a single local replica, no shared bucket).
 */
export const rateLimitStoreKind = parsedSetting("RATE_LIMIT_STORE", (text) =>
  text === "jetstream" || text === "memory" ? Result.succeed(text) : Result.fail(`Expected one of (jetstream, memory) but received ${JSON.stringify(text)}`)).pipe(
    Config.withDefault<"jetstream" | "memory">("jetstream")
  )

/**
 * Gateway replicas sharing the rate-limit bucket (`GATEWAY_REPLICAS`, 1 by default): while the
 * bucket does not answer, each replica admits ceil(limit / replicas) per key per window, so that
 * together they stay near the limit; while it answers, it sizes the room each replica reserves for
 * requests it admits with no round trip (docs/security.md, "Rate limiting across replicas"). Set it
 * to the most replicas that may run at once (an autoscaler's maximum); fewer than run makes the
 * degraded bound looser and the reservations larger, more makes both stricter.
 */
export const gatewayReplicas = integerAtLeast("GATEWAY_REPLICAS", 1, 1, "must be a positive integer")

/** A private signing key as `OAUTH_SIGNING_KEYS` holds it: P-256 for ES256, Ed25519 for EdDSA. */
export type SigningJwk =
  | { readonly kid: string; readonly kty: "EC"; readonly crv: "P-256"; readonly x: string; readonly y: string; readonly d: string }
  | { readonly kid: string; readonly kty: "OKP"; readonly crv: "Ed25519"; readonly x: string; readonly d: string }

const base64url = /^[A-Za-z0-9_-]+$/

/**
 * A member given as `{"kid", "pem"}` (a PEM private key, what Helm's `genPrivateKey` draws) as the
 * JWK it is; a PEM that is not a P-256 or Ed25519 private key stays as it is, to be refused below.
 */
const fromPem = (k: Record<string, unknown>): Record<string, unknown> => {
  if (typeof k["pem"] !== "string") return k
  try {
    const jwk = createPrivateKey(k["pem"]).export({ format: "jwk" })
    return { ...jwk, kid: k["kid"] }
  } catch {
    return { kid: k["kid"], kty: "unreadable PEM" }
  }
}

/** Why a member of `OAUTH_SIGNING_KEYS` is refused, or undefined for a key the gateway can use. */
const signingKeyProblem = (k: Record<string, unknown>): string | undefined => {
  if (typeof k["kid"] !== "string" || k["kid"].length === 0 || k["kid"].length > 128) return "has no 'kid' (1 to 128 characters)"
  if (k["kty"] === "unreadable PEM") return "has a 'pem' that is not a PEM private key"
  const parts = k["kty"] === "EC" && k["crv"] === "P-256" ? ["x", "y", "d"] : k["kty"] === "OKP" && k["crv"] === "Ed25519" ? ["x", "d"] : undefined
  if (parts === undefined) return "is neither an EC P-256 (ES256) nor an OKP Ed25519 (EdDSA) key"
  const missing = parts.filter((part) => typeof k[part] !== "string" || !base64url.test(k[part] as string))
  if (missing.includes("d")) return "is not a private key (no 'd')"
  return missing.length > 0 ? `lacks ${missing.map((m) => `'${m}'`).join(", ")}` : undefined
}

/**
 * The keys of `OAUTH_SIGNING_KEYS` read from its text, or the sentence that says what is wrong:
 * each a private JWK with a `kid`, or `{"kid", "pem"}` with a PEM private key.
 */
export const parseSigningKeys = (text: string): Result.Result<ReadonlyArray<SigningJwk>, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return Result.fail("must be a JSON array of private JWKs")
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return Result.fail("must be a non-empty JSON array of private JWKs (the first signs)")
  const keys: Array<Record<string, unknown>> = []
  for (const [index, key] of parsed.entries()) {
    if (typeof key !== "object" || key === null || Array.isArray(key)) return Result.fail(`key ${index} is not a JSON object`)
    const jwk = fromPem(key as Record<string, unknown>)
    const problem = signingKeyProblem(jwk)
    if (problem !== undefined) return Result.fail(`key ${index} ${problem}`)
    keys.push(jwk)
  }
  const kids = keys.map((key) => key["kid"] as string)
  const repeated = kids.find((kid, index) => kids.indexOf(kid) !== index)
  if (repeated !== undefined) return Result.fail(`the kid '${repeated}' is given twice`)
  // Only the fields a key needs are kept: whatever else the JSON held (`alg`, `use`) is ignored.
  return Result.succeed((keys as Array<Record<string, string>>).map((key): SigningJwk =>
    key["kty"] === "EC"
      ? { kid: key["kid"]!, kty: "EC", crv: "P-256", x: key["x"]!, y: key["y"]!, d: key["d"]! }
      : { kid: key["kid"]!, kty: "OKP", crv: "Ed25519", x: key["x"]!, d: key["d"]! }
  ))
}

/**
 * The keys that sign and verify partner access tokens (`OAUTH_SIGNING_KEYS`, required): the
 * first signs, all verify and are published at `/.well-known/jwks.json`
 * (docs/product-rules.md#partner-clients).
 */
export const signingKeysConfig: Config.Config<ReadonlyArray<SigningJwk>> = Config.Redacted("OAUTH_SIGNING_KEYS").pipe(
  Config.mapEffect((value) =>
    Result.match(parseSigningKeys(Redacted.value(value)), {
      onFailure: (problem) => Effect.fail(invalidSetting("OAUTH_SIGNING_KEYS", problem)),
      onSuccess: Effect.succeed
    }))
)
