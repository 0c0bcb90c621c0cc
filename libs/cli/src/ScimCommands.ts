import { Argument, Command, Flag } from "effect/cli"
import { ScimTokenLabel, ScimTokensPerTenantMax } from "@portfolio/domain"
import { Effect, Schema } from "effect"
import { print } from "./Output.js"
import { createScimToken, listScimTokens, revokeScimToken } from "./ScimOperations.js"
import { scimTokenCreated, scimTokenRevoked, scimTokensListed } from "./ScimOutput.js"
import { json, tenantOption } from "./SharedOptions.js"

const scimToken = Command.make(
  "token",
  {
    tenant: tenantOption,
    label: Flag.String("label").pipe(
      Flag.withSchema(ScimTokenLabel),
      Flag.withDescription("Which identity tool holds it (\"Okta\", \"Entra ID production\"): 1 to 80 characters on one line.")
    ),
    json
  },
  (args) => createScimToken(args).pipe(Effect.flatMap((created) => print(scimTokenCreated(created), args.json)))
).pipe(Command.withDescription(
  `Make a tenant's SCIM token for its identity tool; the token is printed once. A tenant holds at most ${ScimTokensPerTenantMax} active ones (409 beyond): to rotate, make the second, paste it in the tool, revoke the first.`
))

const scimTokens = Command.make(
  "tokens",
  { tenant: tenantOption, json },
  (args) => listScimTokens(args.tenant).pipe(Effect.flatMap((listed) => print(scimTokensListed(listed), args.json)))
).pipe(Command.withDescription("A tenant's SCIM tokens, the active ones first, never the tokens themselves."))

const scimRevoke = Command.make(
  "revoke",
  {
    tenant: tenantOption,
    id: Argument.String("id").pipe(Argument.withSchema(Schema.String.check(Schema.isUUID())), Argument.withDescription("The token's id, as `scim tokens` lists it.")),
    json
  },
  (args) => revokeScimToken(args).pipe(Effect.flatMap((revoked) => print(scimTokenRevoked(revoked), args.json)))
).pipe(Command.withDescription("Revoke a tenant's SCIM token: the identity tool holding it is refused within a second."))

export const scimCommand = Command.make("scim").pipe(
  Command.withDescription("SCIM tokens, with which identity tools provision a tenant's members (gateway admin API)."),
  Command.withSubcommands([scimToken, scimTokens, scimRevoke])
)
