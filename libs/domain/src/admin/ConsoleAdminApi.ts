import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Schema } from "effect"
import { asProblem, Unavailable } from "../Errors.js"
import { OperatorAuthentication, Problems } from "../Security.js"
import { SecurityEvent, SecurityEventsQuery, TenantSecurityEventsQuery } from "./SecurityEvents.js"

/** The console's admin API, on its admin port; operators read the security log through it (`portfolio audit`). */
export class ConsoleAdminGroup extends HttpApiGroup.make("consoleAdmin")
  .add(
    HttpApiEndpoint.get("listSecurityEvents", "/admin/security-events", {
      query: SecurityEventsQuery,
      success: Schema.Array(SecurityEvent),
      // Provisioning, whose own entries are part of the log, did not answer.
      error: asProblem(Unavailable)
    })
  )
  .add(
    // What no tenant's log holds: sign-ins failed or locked out with an e-mail of no account.
    HttpApiEndpoint.get("listUnattributedSecurityEvents", "/admin/unattributed-security-events", {
      query: TenantSecurityEventsQuery,
      success: Schema.Array(SecurityEvent)
    })
  )
  .middleware(OperatorAuthentication) {}

export class ConsoleAdminApi extends HttpApi.make("consoleAdmin")
  .add(ConsoleAdminGroup)
  .middleware(Problems) {}
