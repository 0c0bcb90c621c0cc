import { Argument, Command, Flag } from "effect/cli"
import { PartnerClientId, PartnerName, Scope } from "@portfolio/domain"
import { Effect } from "effect"
import { print } from "./Output.js"
import { createPartner, listPartners, rotatePartnerSecret, setPartnerEnabled } from "./PartnerOperations.js"
import { partnerCreated, partnerSecretRotated, partnersListed, partnerSwitched } from "./PartnerOutput.js"
import { choice, json, parsed, tenantOption } from "./SharedOptions.js"
import { parseGraceDuration } from "./WebhookInput.js"

const clientId = Argument.String("client-id").pipe(Argument.withSchema(PartnerClientId), Argument.withDescription("The client id `partner create` printed: service-partner-<name>-<suffix>."))

const partnerCreate = Command.make(
  "create",
  {
    tenant: tenantOption,
    name: Flag.String("name").pipe(Flag.withSchema(PartnerName), Flag.withDescription("The partner's slug, unique in the tenant; its client id is service-partner-<name>-<random suffix>.")),
    scope: choice("scope", Scope.literals).pipe(Flag.withDescription("The most its tokens may carry: read or write (write includes read).")),
    json
  },
  (args) => createPartner(args).pipe(Effect.flatMap((created) => print(partnerCreated(created), args.json)))
).pipe(Command.withDescription("Register a partner's OAuth 2.0 client; its client_id and client_secret are printed, the secret once."))

const partnerList = Command.make(
  "list",
  { tenant: tenantOption, json },
  (args) => listPartners(args.tenant).pipe(Effect.flatMap((listed) => print(partnersListed(listed), args.json)))
).pipe(Command.withDescription("Every partner client of a tenant, oldest first."))

const partnerRotateSecret = Command.make(
  "rotate-secret",
  {
    clientId,
    graceSeconds: Flag.String("grace").pipe(
      Flag.withMetavar("duration"),
      Flag.withDefault("24h"),
      Flag.mapEffect(parsed(parseGraceDuration)),
      Flag.withDescription("How long the previous secret is still accepted (default 24h): 30s, 15m, 24h, 7d at most; 0 for none.")
    ),
    json
  },
  (args) => rotatePartnerSecret(args.clientId, args.graceSeconds).pipe(Effect.flatMap((client) => print(partnerSecretRotated(client), args.json)))
).pipe(Command.withDescription("Give a partner client a new secret, printed once."))

const partnerSwitch = (enabled: boolean) =>
  Command.make(
    enabled ? "enable" : "disable",
    { clientId, json },
    (args) => setPartnerEnabled(args.clientId, enabled).pipe(Effect.flatMap((client) => print(partnerSwitched(client), args.json)))
  ).pipe(
    Command.withDescription(
      enabled ? "Let a disabled partner client get tokens again." : "Refuse a partner client new tokens; those it holds expire within 5 minutes."
    )
  )

export const partnerCommand = Command.make("partner").pipe(
  Command.withDescription("Partner clients, OAuth 2.0 client credentials (gateway admin API)."),
  Command.withSubcommands([partnerCreate, partnerList, partnerRotateSecret, partnerSwitch(false), partnerSwitch(true)])
)
