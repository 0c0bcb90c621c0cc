import type { PatRequest, PatRequestDecider, PatRequestStatus, Unavailable } from "@portfolio/domain"
import { Context, type DateTime, type Effect, type Option } from "effect"

export interface PatRequestFilter {
  readonly tenantId: string
  readonly status?: PatRequestStatus | undefined
  readonly userSub?: string | undefined
}

/** What settles a pending request: approved with the token it minted, or denied with a reason. */
export type PatRequestDecision =
  | { readonly status: "approved"; readonly decidedAt: DateTime.Utc; readonly decidedBy: PatRequestDecider; readonly patId: string }
  | { readonly status: "denied"; readonly decidedAt: DateTime.Utc; readonly decidedBy: PatRequestDecider; readonly reason: string }

/** Where the gateway keeps PAT requests. Failures of the storage itself surface as `Unavailable`. */
export interface PatRequestStoreShape {
  readonly insert: (request: PatRequest) => Effect.Effect<void, Unavailable>
  readonly find: (id: string) => Effect.Effect<Option.Option<PatRequest>, Unavailable>
  /** A tenant's requests, newest first. */
  readonly list: (filter: PatRequestFilter) => Effect.Effect<ReadonlyArray<PatRequest>, Unavailable>
  /**
   * Settles the request if, and only if, it is still pending, and answers it as settled; none when
   * it is unknown or was settled already. Of concurrent settlements of one request, exactly one
   * succeeds.
   */
  readonly settle: (id: string, decision: PatRequestDecision) => Effect.Effect<Option.Option<PatRequest>, Unavailable>
}

export class PatRequestStore extends Context.Tag("@portfolio/gateway/PatRequestStore")<PatRequestStore, PatRequestStoreShape>() {}
