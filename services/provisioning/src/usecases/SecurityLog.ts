import { Effect } from "effect"
import { SecurityEvents } from "../ports/SecurityEvents.js"

/** A tenant's entries of provisioning's security log, newest first: what the console shows beside its own. */
export const listSecurityEvents = Effect.fn("listSecurityEvents")(function*(
  tenantId: string,
  options: { readonly sinceMs?: number; readonly limit: number }
) {
  const securityEvents = yield* SecurityEvents
  return yield* securityEvents.list(tenantId, options)
})
