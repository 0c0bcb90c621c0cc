import { Effect, Schema } from "effect"
import { DateTimeUtc, Uuid } from "../Wire.js"

/**
 * One entry of a security log (docs/product-rules.md#security-event-log), in the one shape the
 * console's, provisioning's and the gateway's logs share, so that the console merges them.
 */
export class SecurityEvent extends Schema.Class<SecurityEvent>("SecurityEvent")({
  id: Uuid,
  /** Null for what concerns no tenant yet (a failed or locked sign-in). */
  tenantId: Schema.NullOr(Uuid),
  at: DateTimeUtc,
  actorSub: Schema.NullOr(Schema.String),
  actorEmail: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  ip: Schema.String,
  userAgent: Schema.String,
  detail: Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number, Schema.Null]))
}) {}

/** Who an entry names, for a reader: the e-mail, or for an operator (who has none) their name. */
export const actorLabel = (event: { readonly actorEmail: string; readonly actorSub: string | null }): string =>
  event.actorEmail === "" ? (event.actorSub ?? "") : event.actorEmail

/** A page of one tenant's entries, the tenant in the path: since when, and how many (1 to 1000, 200 by default). */
export const TenantSecurityEventsQuery = Schema.Struct({
  since: Schema.optionalKey(DateTimeUtc),
  limit: Schema.NumberFromString.pipe(Schema.check(Schema.isInt()), Schema.check(Schema.isBetween({ minimum: 1, maximum: 1000 })), Schema.withDecodingDefaultKey(Effect.succeed("200")))
})

export const SecurityEventsQuery = Schema.Struct({
  tenantId: Uuid,
  ...TenantSecurityEventsQuery.fields
})
