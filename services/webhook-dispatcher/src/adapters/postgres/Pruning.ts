import { outboxRetention } from "@portfolio/platform/nats"
import { type KeepFor, pruneOnSchedule, type PruneRule, Retention } from "@portfolio/platform/sql"
import { Config } from "effect"
import { Schema } from "./Migrations.js"

/**
 * What the dispatcher forgets (docs/product-rules.md, "Retention"), in this order:
 * - a finished delivery (succeeded, or failed) unchanged for `deliveries`, with its attempts, in
 *   one statement, so that a delivery kept keeps all its attempts. Never a pending one (waiting
 *   for a retry or in flight), and never a failed one while its subscription is disabled: those
 *   are what `recover` sends once it is enabled again, and none are added while it is disabled.
 * - an event no delivery names any more, received before the same cutoff (an event is only ever
 *   recorded with a delivery, in one statement, so it is alone only once its deliveries are gone).
 * - the outbox's published rows, after `outbox`.
 * A pruned delivery is never made again by a replay of its event: the events' durable, when it is
 * created again, starts no earlier than `deliveries` ago (domain/EventsReplay.ts).
 */
export const dispatcherRetention = (keep: { readonly deliveries: KeepFor; readonly outbox: KeepFor }): ReadonlyArray<PruneRule> => [
  {
    table: `${Schema}.deliveries`,
    key: "id",
    keepFor: keep.deliveries,
    prunable: (sql, cutoff) =>
      sql`status <> 'pending' AND updated_at < ${cutoff}
          AND NOT (status = 'failed' AND EXISTS (
            SELECT 1 FROM webhook_dispatcher.subscriptions s
            WHERE s.id = webhook_dispatcher.deliveries.subscription_id AND s.state = 'disabled'))`,
    with: [{ table: `${Schema}.attempts`, column: "delivery_id" }]
  },
  {
    table: `${Schema}.events`,
    key: "id",
    keepFor: keep.deliveries,
    prunable: (sql, cutoff) =>
      sql`received_at < ${cutoff}
          AND NOT EXISTS (SELECT 1 FROM webhook_dispatcher.deliveries d WHERE d.event_id = webhook_dispatcher.events.id)`
  },
  outboxRetention(Schema, keep.outbox)
]

/** The dispatcher's pruning, every `RETENTION_INTERVAL` (libs/platform/src/sql/Retention.ts). */
export const PruningLive = pruneOnSchedule(
  Config.all({ deliveries: Retention.deliveries, outbox: Retention.outbox }).pipe(Config.map(dispatcherRetention))
)
