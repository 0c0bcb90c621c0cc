import { Context, type Effect } from "effect"

/** What the security log records (docs/product-rules.md#security-event-log). */
export const SecurityActions = [
  "sign_in",
  "sign_in_failed",
  "sign_in_locked",
  "sign_out",
  "csrf_refused",
  "pat_requested",
  "pat_request_approved",
  "pat_request_denied",
  "pat_revoked",
  "webhook_created",
  "webhook_updated",
  "webhook_enabled",
  "webhook_disabled",
  "webhook_secret_rotated",
  "webhook_redelivered",
  "webhook_recovered",
  "member_invited",
  "invitation_revoked",
  "member_removed",
  "partner_client_created",
  "partner_secret_rotated",
  "partner_client_enabled",
  "partner_client_disabled"
] as const
export type SecurityAction = (typeof SecurityActions)[number]

export interface SecurityEvent {
  readonly id: string
  /** The tenant the action concerns; null for what concerns no tenant yet (a failed sign-in). */
  readonly tenantId: string | null
  readonly atMs: number
  readonly actorSub: string | null
  readonly actorEmail: string
  /** One of `SecurityActions` for the console's own entries; provisioning's and the gateway's add theirs (`invitation_accepted`, `pat_created`). */
  readonly action: SecurityAction | (string & {})
  /** The object acted on: a request's or a token's id. */
  readonly target: string | null
  readonly ip: string
  readonly userAgent: string
  readonly detail: Readonly<Record<string, string | number | null>>
}

/** Which entries a read answers: from `sinceMs` on, newest first, at most `limit`. */
export interface LogPage {
  readonly sinceMs?: number
  readonly limit: number
}

export interface SecurityLogShape {
  readonly record: (events: ReadonlyArray<SecurityEvent>) => Effect.Effect<void>
  /** A tenant's events, newest first. */
  readonly list: (tenantId: string, page: LogPage) => Effect.Effect<ReadonlyArray<SecurityEvent>>
  /** The events of no tenant (sign-ins with an e-mail of no account), newest first: for operators. */
  readonly listUnattributed: (page: LogPage) => Effect.Effect<ReadonlyArray<SecurityEvent>>
}

export class SecurityLog extends Context.Tag("@portfolio/console/SecurityLog")<SecurityLog, SecurityLogShape>() {}
