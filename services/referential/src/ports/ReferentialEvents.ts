import { Context, type Effect } from "effect"
import type { ReferentialEvent } from "@portfolio/domain"

/**
 * The referential's outbox (application events, das.submitted): appended inside a use case's `writing`, so
 * that an event exists exactly when its change committed; the platform's relay publishes them.
 */
export interface ReferentialEventsShape {
  /** Appends in the given order; a tenant's events are published in the order of its writes. */
  readonly append: (events: ReadonlyArray<ReferentialEvent>) => Effect.Effect<void>
}

export class ReferentialEvents extends Context.Tag("@portfolio/referential/ReferentialEvents")<
  ReferentialEvents,
  ReferentialEventsShape
>() {}
