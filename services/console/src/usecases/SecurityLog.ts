import { newestFirst, SecurityLog, type SecurityLogPage } from "@portfolio/platform/security"
import { Effect } from "effect"
import { DirectoryDesk } from "../ports/DirectoryDesk.js"
import { GatewayLogDesk } from "../ports/GatewayLogDesk.js"

/**
 * A tenant's security log (docs/product-rules.md#security-event-log): what the console recorded,
 * what provisioning recorded itself (acceptances on its page, its public API, operators' welcome
 * links) and what the gateway recorded of operators' actions, newest first.
 */
export const tenantSecurityLog = (tenantId: string, page: SecurityLogPage) =>
  Effect.gen(function*() {
    const [own, provisioning, gateway] = yield* Effect.all([
      (yield* SecurityLog).list(tenantId, page),
      (yield* DirectoryDesk).securityEvents(tenantId, page),
      (yield* GatewayLogDesk).securityEvents(tenantId, page)
    ], { concurrency: 3 })
    return [...own, ...provisioning, ...gateway].sort(newestFirst).slice(0, page.limit)
  })
