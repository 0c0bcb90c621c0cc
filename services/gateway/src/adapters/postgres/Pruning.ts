import { PatRequestLifetimeDays } from "@portfolio/domain"
import { securityLogRetention } from "@portfolio/platform/security"
import { type KeepFor, pruneOnSchedule, type PruneRule, Retention } from "@portfolio/platform/sql"
import { Config } from "effect"

const LifetimeMs = PatRequestLifetimeDays * 86_400_000

/**
 * What the gateway forgets (docs/product-rules.md, "Retention"): the entries of its security log
 * after `securityLog`, and a PAT request `patRequests` after it was settled: decided or closed
 * (`decided_at`), or expired (its filing plus `PatRequestLifetimeDays`, since expiry is not
 * stored). A pending request is never pruned; an approved one's token is a row of its own, which
 * this leaves alone.
 */
export const gatewayRetention = (keep: { readonly securityLog: KeepFor; readonly patRequests: KeepFor }): ReadonlyArray<PruneRule> => [
  securityLogRetention("gateway", keep.securityLog),
  {
    table: "gateway.pat_requests",
    key: "id",
    keepFor: keep.patRequests,
    prunable: (sql, cutoff) =>
      sql`(status <> 'pending' AND decided_at < ${cutoff})
          OR (status = 'pending' AND created_at < ${new Date(cutoff.getTime() - LifetimeMs)})`
  }
]

/** The gateway's pruning, every `RETENTION_INTERVAL` (libs/platform/src/sql/Retention.ts). */
export const PruningLive = pruneOnSchedule(
  Config.all({ securityLog: Retention.securityLog, patRequests: Retention.patRequests }).pipe(Config.map(gatewayRetention))
)
