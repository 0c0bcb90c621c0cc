import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { asProblem, InvalidRequest, Unavailable } from "../Errors.js"
import { OperatorAuthentication } from "../Security.js"
import { SecurityEvent, SecurityEventsQuery, TenantSecurityEventsQuery } from "./SecurityEvents.js"

/** The console's admin API, on its admin port; operators read the security log through it (`portfolio audit`). */
export class ConsoleAdminGroup extends HttpApiGroup.make("consoleAdmin")
  .add(
    HttpApiEndpoint.get("listSecurityEvents", "/admin/security-events")
      .setUrlParams(SecurityEventsQuery)
      .addSuccess(Schema.Array(SecurityEvent))
      // Provisioning, whose own entries are part of the log, did not answer.
      .addError(asProblem(Unavailable))
  )
  .add(
    // What no tenant's log holds: sign-ins failed or locked out with an e-mail of no account.
    HttpApiEndpoint.get("listUnattributedSecurityEvents", "/admin/unattributed-security-events")
      .setUrlParams(TenantSecurityEventsQuery)
      .addSuccess(Schema.Array(SecurityEvent))
  )
  .middleware(OperatorAuthentication) {}

export class ConsoleAdminApi extends HttpApi.make("consoleAdmin")
  .add(ConsoleAdminGroup)
  .addError(asProblem(InvalidRequest)) {}
