import { type CallerIdentity, InsufficientScope, type Scope, scopeAllows } from "@portfolio/domain"
import { Effect } from "effect"

/**
 * Defence in depth behind the gateway: the provisioning endpoints are for a tenant-admin whose
 * token carries the scope the operation needs, whatever reached this service.
 */
export const authorizeTenantAdmin = (caller: CallerIdentity, required: Scope, operation: string) => {
  if (caller.role !== "tenant-admin") {
    return Effect.fail(
      new InsufficientScope({ detail: `role '${caller.role}' does not allow ${operation}, which requires the tenant-admin role` })
    )
  }
  if (caller.scope === "admin" || !scopeAllows(caller.scope, required)) {
    return Effect.fail(
      new InsufficientScope({ detail: `token scope '${caller.scope}' does not allow ${operation}, which requires '${required}'` })
    )
  }
  return Effect.void
}
