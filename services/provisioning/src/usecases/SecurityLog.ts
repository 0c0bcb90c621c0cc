import { DateTime, Effect } from "effect"
import { newId, type RequestOrigin } from "@portfolio/platform"
import { type ProvisioningSecurityEvent, SecurityEvents } from "../ports/SecurityEvents.js"

/**
 * Records an action in the enclosing unit of work, so that it is kept only if the action commits.
 * Without an origin nothing is recorded: the console's door passes none, since the console logs
 * those actions itself with the member's browser address, and one action must not appear twice.
 */
export const recordSecurityEvent = (
  origin: RequestOrigin | undefined,
  event: Omit<ProvisioningSecurityEvent, "id" | "atMs" | "ip" | "userAgent"> & { readonly at: DateTime.Utc }
) =>
  origin === undefined ? Effect.void : Effect.gen(function*() {
    const securityEvents = yield* SecurityEvents
    const { at, ...entry } = event
    yield* securityEvents.record({ ...entry, id: yield* newId, atMs: DateTime.toEpochMillis(at), ip: origin.ip, userAgent: origin.userAgent })
  })

/** A tenant's entries of provisioning's security log, newest first: what the console shows beside its own. */
export const listSecurityEvents = Effect.fn("listSecurityEvents")(function*(
  tenantId: string,
  options: { readonly sinceMs?: number; readonly limit: number }
) {
  const securityEvents = yield* SecurityEvents
  return yield* securityEvents.list(tenantId, options)
})
