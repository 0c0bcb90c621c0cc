import { HttpApiBuilder } from "@effect/platform"
import { ConsoleAdminApi, SecurityEvent, Unavailable } from "@portfolio/domain"
import { DateTime, Effect } from "effect"
import { type LogPage, type SecurityEvent as SecurityLogEvent, SecurityLog } from "../../ports/SecurityLog.js"
import { tenantSecurityLog } from "../../usecases/SecurityLog.js"

const pageOf = (urlParams: { readonly since?: DateTime.Utc | undefined; readonly limit: number }): LogPage => ({
  limit: urlParams.limit,
  ...(urlParams.since === undefined ? {} : { sinceMs: DateTime.toEpochMillis(urlParams.since) })
})

const encoded = (events: ReadonlyArray<SecurityLogEvent>) => events.map(({ atMs, ...e }) => SecurityEvent.make({ ...e, at: DateTime.unsafeMake(atMs) }))

/** The console's admin API: the security log for operators (`portfolio audit`). */
export const ConsoleAdminHttpLive = HttpApiBuilder.group(ConsoleAdminApi, "consoleAdmin", (handlers) =>
  handlers
    .handle("listSecurityEvents", ({ urlParams }) =>
      tenantSecurityLog(urlParams.tenantId, pageOf(urlParams)).pipe(
        Effect.map(encoded),
        Effect.catchTag("UpstreamUnavailable", () => Effect.fail(new Unavailable({ detail: "Provisioning, which keeps part of the log, did not answer; try again later." })))
      ))
    // Only the console files entries under no tenant: provisioning and the gateway have none.
    .handle("listUnattributedSecurityEvents", ({ urlParams }) =>
      Effect.flatMap(SecurityLog, (log) => log.listUnattributed(pageOf(urlParams))).pipe(Effect.map(encoded))))
