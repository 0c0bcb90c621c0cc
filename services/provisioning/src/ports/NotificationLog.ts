import { Context, type Effect } from "effect"

/**
 * Which recipients each event has been mailed to, so that a redelivered event mails nobody twice
 * (JetStream delivers at least once; docs/architecture.md, consumers are idempotent).
 */
export interface NotificationLogShape {
  /**
   * Records that `recipient` (compared case-insensitively) is mailed for `eventId`, as part of the
   * enclosing unit of work: true when nobody had recorded it, false when it was already recorded.
   * A concurrent claim of the same pair waits until the unit of work that holds it ends: it then
   * sees it recorded if that one committed, and claims it if that one rolled back.
   */
  readonly claim: (eventId: string, recipient: string) => Effect.Effect<boolean>
}

export class NotificationLog extends Context.Service<NotificationLog, NotificationLogShape>()("@portfolio/provisioning/NotificationLog") {}
