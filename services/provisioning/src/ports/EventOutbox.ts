import { Context, type Effect } from "effect"
import type { MemberRemoved } from "@portfolio/domain"

/** Events written in the same unit of work as the change they announce, published later by a relay. */
export interface EventOutboxShape {
  readonly append: (event: MemberRemoved) => Effect.Effect<void>
}

export class EventOutbox extends Context.Tag("@portfolio/provisioning/EventOutbox")<EventOutbox, EventOutboxShape>() {}
