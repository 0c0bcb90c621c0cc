import { HttpApiBuilder } from "effect/http-api"
import { ConsoleAdminApi, Unavailable } from "@portfolio/domain"
import { SecurityLog } from "@portfolio/platform/security"
import { Effect } from "effect"
import { tenantSecurityLog } from "../../usecases/SecurityLog.js"

/** The handlers of the console's admin API: the security log for operators (`portfolio audit`). */
export const AdminHandlersLive = HttpApiBuilder.group(ConsoleAdminApi, "consoleAdmin", (handlers) =>
  handlers
    .handle("listSecurityEvents", ({ query }) =>
      tenantSecurityLog(query.tenantId, query).pipe(
        Effect.catchTag("UpstreamUnavailable", () => Effect.fail(new Unavailable({ detail: "Provisioning, which keeps part of the log, did not answer; try again later." })))
      ))
    // Only the console files entries under no tenant: provisioning and the gateway have none.
    .handle("listUnattributedSecurityEvents", ({ query }) => Effect.flatMap(SecurityLog, (log) => log.list(null, query))))
