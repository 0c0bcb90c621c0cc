import { recordSecurityEvents, tenantSecurityEvents } from "@portfolio/platform/security"
import { type DateTime, Effect } from "effect"
import { type AdminCall, type GatewaySecurityAction, isOperatorCall } from "../domain/OperatorActions.js"

export interface ActionEntry {
  readonly tenantId: string
  readonly action: GatewaySecurityAction
  /** The object acted on: a token's, a request's or a partner client's id. Never a secret. */
  readonly target: string
  readonly detail?: Readonly<Record<string, string | number | null>>
}

/**
 * Records what `call` did, at `at`, in the enclosing unit of work, so that the entry is kept if and
 * only if the action is; nothing when the console made the call (it records its own).
 */
export const recordAction = (call: AdminCall, at: DateTime.Utc, entry: ActionEntry) =>
  isOperatorCall(call)
    // An operator is known by the name they sign with, not by an e-mail.
    ? recordSecurityEvents(call, [{ ...entry, at, actorSub: call.subject, actorEmail: "" }])
    : Effect.void

/** A tenant's entries of the gateway's security log, newest first: what the console shows beside its own. */
export const listSecurityEvents = tenantSecurityEvents("gateway.listSecurityEvents")
