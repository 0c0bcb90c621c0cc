import type { SecurityEvent, Unavailable } from "@portfolio/domain"
import { Context, type DateTime, type Effect } from "effect"

/** Where the gateway keeps its security log. Failures of the storage itself surface as `Unavailable`. */
export interface SecurityEventsShape {
  /** Records the entry as part of the enclosing unit of work: it is kept only if that work commits. */
  readonly record: (event: SecurityEvent) => Effect.Effect<void, Unavailable>
  /** A tenant's entries at or after `since`, newest first, at most `limit`. */
  readonly list: (
    tenantId: string,
    options: { readonly since?: DateTime.Utc | undefined; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<SecurityEvent>, Unavailable>
}

export class SecurityEvents extends Context.Tag("@portfolio/gateway/SecurityEvents")<SecurityEvents, SecurityEventsShape>() {}
