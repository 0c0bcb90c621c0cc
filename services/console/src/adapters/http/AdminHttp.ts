import { HttpApiBuilder } from "@effect/platform"
import { ConsoleAdminApi, SecurityEvent, Unavailable } from "@portfolio/domain"
import { DateTime, Effect, Option } from "effect"
import { tenantSecurityLog } from "../../usecases/SecurityLog.js"

/** The console's admin API: the security log for operators (`portfolio audit`). */
export const ConsoleAdminHttpLive = HttpApiBuilder.group(ConsoleAdminApi, "consoleAdmin", (handlers) =>
  handlers.handle("listSecurityEvents", ({ urlParams }) =>
    Effect.gen(function*() {
      const sinceMs = Option.map(Option.fromNullable(urlParams.since), DateTime.toEpochMillis)
      const events = yield* tenantSecurityLog(urlParams.tenantId, {
        limit: urlParams.limit,
        ...(Option.isSome(sinceMs) ? { sinceMs: sinceMs.value } : {})
      })
      return events.map(({ atMs, ...e }) => SecurityEvent.make({ ...e, at: DateTime.unsafeMake(atMs) }))
    }).pipe(Effect.catchTag("UpstreamUnavailable", () => Effect.fail(new Unavailable({ detail: "Provisioning, which keeps part of the log, did not answer; try again later." }))))))
