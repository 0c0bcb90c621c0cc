import { type RequestOrigin } from "@portfolio/platform/http"
import { recordSecurityEvents, tenantSecurityEvents } from "@portfolio/platform/security"
import { type DateTime, Effect } from "effect"
import type { ProvisioningSecurityAction } from "../domain/SecurityActions.js"

/** One action to record: who did what to which object, when; the origin gives the address. */
export interface ActionEntry {
  readonly tenantId: string
  readonly at: DateTime.Utc
  readonly actorSub: string | null
  readonly actorEmail: string
  readonly action: ProvisioningSecurityAction
  /** The object acted on: the invitation's id, or the removed member's userSub. */
  readonly target: string | null
  readonly detail: Readonly<Record<string, string | number | null>>
}

/**
 * Records an action in the enclosing unit of work, so that it is kept only if the action commits.
 * Without an origin nothing is recorded: the console's door passes none, since the console logs
 * those actions itself with the member's browser address, and one action must not appear twice.
 */
export const recordSecurityEvent = (origin: RequestOrigin | undefined, entry: ActionEntry) =>
  origin === undefined ? Effect.void : recordSecurityEvents(origin, [entry])

/** A tenant's entries of provisioning's security log, newest first: what the console shows beside its own. */
export const listSecurityEvents = tenantSecurityEvents("listSecurityEvents")
