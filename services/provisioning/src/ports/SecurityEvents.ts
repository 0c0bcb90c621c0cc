import { Context, type Effect } from "effect"

/**
 * What provisioning records in its security log (docs/product-rules.md#security-event-log): the
 * acceptances on its page and the wrong current passwords typed there, and the invitations and
 * removals made through its public API or by an operator; the console logs its own.
 */
export type ProvisioningSecurityAction =
  | "invitation_accepted"
  | "invitation_password_refused"
  | "member_invited"
  | "invitation_revoked"
  | "member_removed"

/** One entry, in the shape of the console's (libs/domain/src/admin/ConsoleAdminApi.ts `SecurityEvent`). */
export interface ProvisioningSecurityEvent {
  readonly id: string
  readonly tenantId: string
  readonly atMs: number
  readonly actorSub: string | null
  readonly actorEmail: string
  readonly action: ProvisioningSecurityAction
  /** The object acted on: the invitation's id, or the removed member's userSub. */
  readonly target: string | null
  readonly ip: string
  readonly userAgent: string
  readonly detail: Readonly<Record<string, string | number | null>>
}

export interface SecurityEventsShape {
  /** Records the entry as part of the enclosing unit of work: it is kept only if that work commits. */
  readonly record: (event: ProvisioningSecurityEvent) => Effect.Effect<void>
  /** A tenant's entries at or after `sinceMs`, newest first, at most `limit`. */
  readonly list: (
    tenantId: string,
    options: { readonly sinceMs?: number; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<ProvisioningSecurityEvent>>
}

export class SecurityEvents extends Context.Tag("@portfolio/provisioning/SecurityEvents")<SecurityEvents, SecurityEventsShape>() {}
