import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { asProblem, InvalidRequest, Unavailable } from "../Errors.js"
import { OperatorAuthentication } from "../Security.js"

/** One entry of the console's security log (docs/product-rules.md#security-event-log). */
export class SecurityEvent extends Schema.Class<SecurityEvent>("SecurityEvent")({
  id: Schema.UUID,
  /** Null for what concerns no tenant yet (a failed or locked sign-in). */
  tenantId: Schema.NullOr(Schema.UUID),
  at: Schema.DateTimeUtc,
  actorSub: Schema.NullOr(Schema.String),
  actorEmail: Schema.String,
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  ip: Schema.String,
  userAgent: Schema.String,
  detail: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Null) })
}) {}

export const SecurityEventsQuery = Schema.Struct({
  tenantId: Schema.UUID,
  since: Schema.optional(Schema.DateTimeUtc),
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)), { default: () => 200 })
})

/** The console's admin API, on its admin port; operators read the security log through it (`portfolio audit`). */
export class ConsoleAdminGroup extends HttpApiGroup.make("consoleAdmin")
  .add(
    HttpApiEndpoint.get("listSecurityEvents", "/admin/security-events")
      .setUrlParams(SecurityEventsQuery)
      .addSuccess(Schema.Array(SecurityEvent))
      // Provisioning, whose own entries are part of the log, did not answer.
      .addError(asProblem(Unavailable))
  )
  .middleware(OperatorAuthentication) {}

export class ConsoleAdminApi extends HttpApi.make("consoleAdmin")
  .add(ConsoleAdminGroup)
  .addError(asProblem(InvalidRequest)) {}
