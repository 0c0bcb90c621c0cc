/**
 * Where a new events durable starts (docs/product-rules.md, "Webhooks" and "Retention"): at the
 * oldest enabled subscription's creation (older events concern none), or now when there is none,
 * but never before the deliveries' retention, less a margin, ago. A finished delivery is pruned
 * once unchanged for that long, and with it the record that its event was delivered to its
 * subscription: an event that old, heard again, would be delivered a second time. Its event was
 * published before the delivery was recorded, so a start after the cutoff never replays it; the
 * margin covers clocks that disagree (the pruner's, PostgreSQL's and the NATS server's).
 */
export const ReplayMarginMs = 3_600_000

export const eventsDurableStart = (oldestEnabled: Date | undefined, now: Date, deliveriesKeptForMs: number | "forever"): Date => {
  const start = oldestEnabled ?? now
  if (deliveriesKeptForMs === "forever") return start
  const earliest = now.getTime() - deliveriesKeptForMs + ReplayMarginMs
  return start.getTime() < earliest ? new Date(earliest) : start
}
