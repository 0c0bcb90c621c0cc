import { Effect } from "effect"
import { Directory } from "../ports/Directory.js"
import { GatewayLog } from "../ports/GatewayLog.js"
import { SecurityLog, type LogPage } from "../ports/SecurityLog.js"

/**
 * A tenant's security log (docs/product-rules.md#security-event-log): what the console recorded,
 * what provisioning recorded itself (acceptances on its page, its public API, operators' welcome
 * links) and what the gateway recorded of operators' actions, newest first.
 */
export const tenantSecurityLog = (tenantId: string, options: LogPage) =>
  Effect.gen(function*() {
    const [own, provisioning, gateway] = yield* Effect.all([
      (yield* SecurityLog).list(tenantId, options),
      (yield* Directory).securityEvents(tenantId, options),
      (yield* GatewayLog).securityEvents(tenantId, options)
    ], { concurrency: 3 })
    return [...own, ...provisioning, ...gateway].sort((a, b) => b.atMs - a.atMs || a.id.localeCompare(b.id)).slice(0, options.limit)
  })
