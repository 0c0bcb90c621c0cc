import { Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { actorLabel, type SecurityEvent, SecurityEvent as SecurityEventSchema } from "@portfolio/domain"
import { DateTime, Effect, Option, Schema } from "effect"
import { AdminClients } from "./AdminClients.js"
import { getTenant } from "./Operations.js"
import { type Output, print } from "./Output.js"
import { json, tenantOption } from "./SharedOptions.js"

/** A tenant's security log as the console recorded it, newest first. */
export const listSecurityEvents = Effect.fn("listSecurityEvents")(function*(input: { readonly tenant: string; readonly since: Option.Option<DateTime.Utc> }) {
  const { console: consoleAdmin } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  return yield* consoleAdmin.consoleAdmin.listSecurityEvents({
    urlParams: { tenantId: tenant.id, limit: 1000, ...(Option.isSome(input.since) ? { since: input.since.value } : {}) }
  })
})

const encodeEvents = Schema.encodeSync(Schema.Array(SecurityEventSchema))

const line = (e: SecurityEvent) =>
  `${DateTime.formatIso(e.at)}  ${e.action.padEnd(22)} ${actorLabel(e)}${e.target === null ? "" : ` on ${e.target}`}  from ${e.ip}`

export const securityEventsListed = (tenant: string, events: ReadonlyArray<SecurityEvent>): Output => ({
  json: encodeEvents(events),
  human: events.length === 0 ? [`No security event in ${tenant}.`] : events.map(line)
})

export const auditCommand = Command.make(
  "audit",
  {
    tenant: tenantOption,
    since: Options.text("since").pipe(
      Options.withPseudoName("ISO-8601"),
      Options.optional,
      Options.mapEffect((text) =>
        Option.match(text, {
          onNone: () => Effect.succeed(Option.none<DateTime.Utc>()),
          onSome: (value) =>
            Option.match(DateTime.make(value), {
              onNone: () => Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--since must be an ISO-8601 date or time, such as 2026-11-01 or 2026-11-01T08:00:00Z (got ${value})`))),
              onSome: (d) => Effect.succeed(Option.some(d))
            })
        })),
      Options.withDescription("Only the events from this moment on.")
    ),
    json
  },
  (args) => listSecurityEvents(args).pipe(Effect.flatMap((events) => print(securityEventsListed(args.tenant, events), args.json)))
).pipe(Command.withDescription("A tenant's security log (console admin API): sign-ins, failures, token requests and decisions, webhook and member changes; newest first, at most 1,000."))
