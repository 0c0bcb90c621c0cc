import type { PatRequest, PatRequestDecider, PatRequestStatus, Unavailable } from "@portfolio/domain"
import { Context, type DateTime, type Effect, type Option } from "effect"

export interface PatRequestFilter {
  readonly tenantId: string
  /** As the requests stand at `now`: `pending` leaves out the expired ones, `expired` takes only them. */
  readonly status?: PatRequestStatus | undefined
  readonly userSub?: string | undefined
  readonly now: DateTime.Utc
  /** A page: the requests after this one in the list's order (newest first, then by id), at most `limit`. */
  readonly after?: { readonly createdAt: DateTime.Utc; readonly id: string } | undefined
  readonly limit?: number | undefined
}

/** What settles a pending request: approved with the token it minted, or denied with a reason. */
export type PatRequestDecision =
  | { readonly status: "approved"; readonly decidedAt: DateTime.Utc; readonly decidedBy: PatRequestDecider; readonly patId: string }
  | { readonly status: "denied"; readonly decidedAt: DateTime.Utc; readonly decidedBy: PatRequestDecider; readonly reason: string }

/** Where the gateway keeps PAT requests. Failures of the storage itself surface as `Unavailable`. */
export interface PatRequestRepositoryShape {
  readonly insert: (request: PatRequest) => Effect.Effect<void, Unavailable>
  /**
   * How many of the holder's requests are pending at `now` (expired ones left out), the holder's
   * filings held until the enclosing unit of work ends: a concurrent call for the same holder waits
   * for that unit to commit or roll back, then counts what it stored. Inside a unit of work, a
   * count and the insert that follows it are therefore never interleaved with another filing of the holder.
   */
  readonly lockPendingOf: (
    holder: { readonly tenantId: string; readonly userSub: string },
    now: DateTime.Utc
  ) => Effect.Effect<number, Unavailable>
  readonly find: (id: string) => Effect.Effect<Option.Option<PatRequest>, Unavailable>
  /** A tenant's requests, newest first, with the status they had when stored (pending past expiry included). */
  readonly list: (filter: PatRequestFilter) => Effect.Effect<ReadonlyArray<PatRequest>, Unavailable>
  /**
   * Settles the request if, and only if, it is still pending and not expired at the decision's time,
   * and answers it as settled; none when it is unknown, settled already or expired. Of concurrent settlements of one request, exactly one
   * succeeds.
   */
  readonly settle: (id: string, decision: PatRequestDecision) => Effect.Effect<Option.Option<PatRequest>, Unavailable>
  /**
   * Closes, at `at` and with `reason`, every request of the holder still pending at `at` and filed
   * before `filedBefore`, and answers them; closing again closes nothing.
   */
  readonly closeHolder: (
    holder: { readonly tenantId: string; readonly userSub: string },
    filedBefore: DateTime.Utc,
    at: DateTime.Utc,
    reason: string
  ) => Effect.Effect<ReadonlyArray<PatRequest>, Unavailable>
}

export class PatRequestRepository extends Context.Service<PatRequestRepository, PatRequestRepositoryShape>()("@portfolio/gateway/PatRequestRepository") {}
