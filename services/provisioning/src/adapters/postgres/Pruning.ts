import { outboxRetention } from "@portfolio/platform/nats"
import { securityLogRetention } from "@portfolio/platform/security"
import { type KeepFor, pruneOnSchedule, type PruneRule, Retention } from "@portfolio/platform/sql"
import { Config } from "effect"

/**
 * What provisioning forgets (docs/product-rules.md, "Retention"): its security log's entries
 * after `securityLog`, its outbox's published rows after `outbox`. Not its invitations (the
 * public list answers expired ones as `EXPIRED`), its members (a removed one's row keeps what they
 * created attributable), nor `event_notifications` (Migrations.ts says why).
 */
export const provisioningRetention = (keep: { readonly securityLog: KeepFor; readonly outbox: KeepFor }): ReadonlyArray<PruneRule> => [
  securityLogRetention("provisioning", keep.securityLog),
  outboxRetention("provisioning", keep.outbox)
]

/** Provisioning's pruning, every `RETENTION_INTERVAL` (libs/platform/src/sql/Retention.ts). */
export const PruningLive = pruneOnSchedule(
  Config.all({ securityLog: Retention.securityLog, outbox: Retention.outbox }).pipe(Config.map(provisioningRetention))
)
