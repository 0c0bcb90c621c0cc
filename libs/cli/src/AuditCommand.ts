import { Command, Flag } from "effect/cli"
import { actorLabel, type SecurityEvent, SecurityEvent as SecurityEventSchema } from "@portfolio/domain"
import { DateTime, Effect, Option, Schema } from "effect"
import { AdminClients } from "./AdminClients.js"
import { getTenant } from "./Operations.js"
import { encodeJson, type Output, print } from "./Output.js"
import { json, switchFlag, tenantOption, usageError } from "./SharedOptions.js"

/** The most a listing answers; the admin API's own bound. */
export const AuditPageSize = 1000

/**
 * A tenant's security log as the console recorded it, newest first; or, without a tenant, the
 * entries of no tenant (sign-ins failed or locked out with an e-mail of no account).
 */
export const listSecurityEvents = Effect.fn("listSecurityEvents")(function*(input: { readonly tenant: Option.Option<string>; readonly since: Option.Option<DateTime.Utc> }) {
  const { console: consoleAdmin } = yield* AdminClients
  const page = { limit: AuditPageSize, ...(Option.isSome(input.since) ? { since: input.since.value } : {}) }
  if (Option.isNone(input.tenant)) return yield* consoleAdmin.consoleAdmin.listUnattributedSecurityEvents({ query: page })
  const tenant = yield* getTenant(input.tenant.value)
  return yield* consoleAdmin.consoleAdmin.listSecurityEvents({ query: { tenantId: tenant.id, ...page } })
})

const encodeEvents = encodeJson(Schema.Array(SecurityEventSchema))

const line = (e: SecurityEvent) =>
  `${DateTime.formatIso(e.at)}  ${e.action.padEnd(22)} ${actorLabel(e)}${e.target === null ? "" : ` on ${e.target}`}  from ${e.ip}`

export const securityEventsListed = (tenant: Option.Option<string>, events: ReadonlyArray<SecurityEvent>): Output => ({
  json: encodeEvents(events),
  human: events.length === 0
    ? [Option.match(tenant, { onNone: () => "No security event outside the tenants.", onSome: (slug) => `No security event in ${slug}.` })]
    : [
      ...events.map(line),
      // Said, not left for the reader to guess from the count: older entries may exist beyond the page.
      ...(events.length >= AuditPageSize ? [`(the newest ${AuditPageSize.toLocaleString("en")} only: older entries are not shown)`] : [])
    ]
})

export const auditCommand = Command.make(
  "audit",
  {
    // One of the two, never both (the validation below): a tenant's log, or the entries of none.
    tenant: tenantOption.pipe(Flag.optional),
    unattributed: switchFlag("unattributed").pipe(
      Flag.withDescription("Instead of a tenant's log, the entries of none: sign-ins failed or locked out with an e-mail of no account.")
    ),
    since: Flag.String("since").pipe(
      Flag.withMetavar("ISO-8601"),
      Flag.optional,
      Flag.mapEffect((text) =>
        Option.match(text, {
          onNone: () => Effect.succeed(Option.none<DateTime.Utc>()),
          onSome: (value) =>
            Option.match(DateTime.make(value), {
              onNone: () => Effect.fail(usageError(`--since must be an ISO-8601 date or time, such as 2026-11-01 or 2026-11-01T08:00:00Z (got ${value})`)),
              onSome: (d) => Effect.succeed(Option.some(d))
            })
        })),
      Flag.withDescription("Only the events from this moment on.")
    ),
    json
  },
  (args) => listSecurityEvents(args).pipe(Effect.flatMap((events) => print(securityEventsListed(args.tenant, events), args.json)))
).pipe(
  Command.validate(({ tenant, unattributed }) =>
    Option.isSome(tenant) === unattributed
      ? Effect.fail(usageError("Give --tenant <slug> for a tenant's log, or --unattributed for the entries of no tenant."))
      : Effect.void
  ),
  Command.withDescription(
    "A tenant's security log (console admin API): sign-ins, failures, token requests and decisions, webhook and member changes; newest first, at most 1,000. --unattributed: the entries of no tenant."
  )
)
