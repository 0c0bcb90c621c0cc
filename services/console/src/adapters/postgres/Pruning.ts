import { securityLogRetention } from "@portfolio/platform/security"
import { type KeepFor, pruneOnSchedule, type PruneRule, Retention } from "@portfolio/platform/sql"
import { Effect } from "effect"
import { ConsoleSettings, type ConsoleSettingsShape } from "../../Config.js"

/**
 * What the console forgets (docs/product-rules.md, "Retention"): a session idle past its limit
 * (no request can use it any more) and a sign-in attempt older than the lockout window (the
 * lockout counts nothing older), at once; its security log's entries after `securityLog`.
 */
export const consoleRetention = (
  settings: Pick<ConsoleSettingsShape, "session" | "lockout">,
  keep: { readonly securityLog: KeepFor }
): ReadonlyArray<PruneRule> => [
  {
    table: "console.sessions",
    key: "id_hash",
    keepFor: settings.session.idleMs,
    prunable: (sql, cutoff) => sql`last_seen_at < ${cutoff}`
  },
  {
    table: "console.sign_in_attempts",
    key: "id",
    keepFor: settings.lockout.windowMs,
    prunable: (sql, cutoff) => sql`at < ${cutoff}`
  },
  securityLogRetention("console", keep.securityLog)
]

/** The console's pruning, every `RETENTION_INTERVAL` (libs/platform/src/sql/Retention.ts); every replica runs it. */
export const PruningLive = pruneOnSchedule(
  Effect.zipWith(ConsoleSettings, Retention.securityLog, (settings, securityLog) => consoleRetention(settings, { securityLog }))
)
