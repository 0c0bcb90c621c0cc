import { Effect } from "effect"
import { Directory } from "../ports/Directory.js"
import { SecurityLog } from "../ports/SecurityLog.js"

/**
 * A tenant's security log (docs/product-rules.md#security-event-log): what the console recorded,
 * and what provisioning recorded itself (acceptances, on its own page), newest first.
 */
export const tenantSecurityLog = (tenantId: string, options: { readonly sinceMs?: number; readonly limit: number }) =>
  Effect.gen(function*() {
    const [own, provisioning] = yield* Effect.all([
      (yield* SecurityLog).list(tenantId, options),
      (yield* Directory).securityEvents(tenantId, options)
    ], { concurrency: 2 })
    return [...own, ...provisioning].sort((a, b) => b.atMs - a.atMs || a.id.localeCompare(b.id)).slice(0, options.limit)
  })
