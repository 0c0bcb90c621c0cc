import { Context, type Effect } from "effect"

/**
 * Whether the rate limit holds exactly across replicas right now. `degraded`: the shared windows
 * do not answer, and each replica counts alone, admitting at most ceil(limit / `replicas`) per key
 * per window (docs/product-rules.md#rate-limiting). Serving goes on either way: it is a readiness
 * detail, never a reason to refuse traffic.
 */
export interface RateLimitCondition {
  readonly degraded: boolean
  /** `jetstream`: windows shared by the replicas; `memory`: this process is the only counter by configuration. */
  readonly store: "jetstream" | "memory"
  /** The replica count (`GATEWAY_REPLICAS`) that divides each replica's share while degraded. */
  readonly replicas: number
  /** While degraded: since when (ISO 8601) and what failed first. */
  readonly since?: string
  readonly reason?: string
}

export interface RateLimitHealthShape {
  readonly condition: Effect.Effect<RateLimitCondition>
}

export class RateLimitHealth extends Context.Service<RateLimitHealth, RateLimitHealthShape>()("@portfolio/gateway/RateLimitHealth") {}
