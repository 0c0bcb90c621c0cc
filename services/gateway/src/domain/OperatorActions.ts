import type { RequestOrigin } from "@portfolio/platform/http"

/**
 * The gateway's security log (docs/product-rules.md#security-event-log): the PAT, partner client
 * and SCIM token actions that operators make on its admin API. The names are the console's, whose log
 * shows these entries beside its own.
 */
export type GatewaySecurityAction =
  | "pat_created"
  | "pat_requested"
  | "pat_request_approved"
  | "pat_request_denied"
  | "pat_revoked"
  | "partner_client_created"
  | "partner_secret_rotated"
  | "partner_client_enabled"
  | "partner_client_disabled"
  | "scim_token_created"
  | "scim_token_revoked"

/** Who made an admin call: the subject of its signed assertion, and the client's address and user agent. */
export interface AdminCall extends RequestOrigin {
  readonly subject: string
}

/**
 * Whether the gateway records what `call` does. The console signs as `console:<e-mail>` and records
 * its members' actions itself, with the member's browser address, which the gateway never sees: a
 * second entry would only repeat it with the console's address. Any other caller is an operator.
 */
export const isOperatorCall = (call: AdminCall): boolean => !call.subject.startsWith("console:")
