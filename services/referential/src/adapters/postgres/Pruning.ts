import { outboxRetention } from "@portfolio/platform/nats"
import { type KeepFor, pruneOnSchedule, type PruneRule, Retention } from "@portfolio/platform/sql"
import { Config } from "effect"

/**
 * What the referential forgets (docs/product-rules.md, "Retention"): its outbox's published rows
 * after `outbox`. Everything else it keeps is the tenants' portfolio, and its change log is a
 * product record of its own.
 */
export const referentialRetention = (keep: { readonly outbox: KeepFor }): ReadonlyArray<PruneRule> => [outboxRetention("referential", keep.outbox)]

/** The referential's pruning, every `RETENTION_INTERVAL` (libs/platform/src/sql/Retention.ts). */
export const PruningLive = pruneOnSchedule(Config.map(Retention.outbox, (outbox) => referentialRetention({ outbox })))
