import { Command, Flag } from "effect/cli"
import { ArbRole, InvalidRequest, IssuerUrl, SsoConnectionRequest } from "@portfolio/domain"
import { Effect, FileSystem, Option, Redacted, Result } from "effect"
import { print } from "./Output.js"
import { choice, fileOption, json, parsed, switchFlag, tenantOption, usageError } from "./SharedOptions.js"
import {
  MaxClientSecretLength,
  MissingDomains,
  parseBreakGlass,
  parseClientSecret,
  parseDomains,
  parseRoleClaim,
  parseRoleMap,
  RoleMapWithoutClaim
} from "./SsoInput.js"
import { confirmSsoDomains, disableSso, getSso, setSso } from "./SsoOperations.js"
import { ssoDisabled, ssoDomainsConfirmed, ssoSet, ssoShown } from "./SsoOutput.js"
import { Stdin } from "./Stdin.js"

/**
 * Optional for the parser, so that its absence is told in the words of `MissingDomains` rather
 * than as a bare "expected to find option".
 */
const domainsOption = Flag.String("domains").pipe(
  Flag.withMetavar("domains"),
  Flag.optional,
  Flag.mapEffect(Option.match({
    onNone: () => Effect.fail(usageError(MissingDomains)),
    onSome: parsed(parseDomains)
  })),
  Flag.withDescription("The e-mail domains whose people sign in with this provider, comma-separated (example.com,example.org): at least one, always.")
)

/**
 * The claim and its map, read together (the validation of `sso set`): a map without the claim
 * that carries its values is refused.
 */
const rolesOptions = {
  claim: Flag.String("role-claim").pipe(
    Flag.withMetavar("claim"),
    Flag.mapEffect(parsed(parseRoleClaim)),
    Flag.optional,
    Flag.withDescription("The ID token's claim whose values give a role (such as groups); without it everyone gets the default role.")
  ),
  map: Flag.String("role-map").pipe(
    Flag.withMetavar("value=role,..."),
    Flag.mapEffect(parsed(parseRoleMap)),
    Flag.optional,
    Flag.withDescription(`Which value of the role claim gives which role, comma-separated: ${ArbRole.literals.join(", ")}. Needs --role-claim.`)
  )
}

/** The file is looked at before it is read, so that a wrong path never loads a large file whole. */
const SecretFileMaxBytes = 4 * MaxClientSecretLength

/**
 * The secret never comes from argv, where `ps` and the shell's history would keep it: from a file,
 * or from stdin with `-`. Whatever is refused is said without quoting the text read.
 */
const readClientSecret = (file: string): Effect.Effect<Redacted.Redacted<string>, InvalidRequest, Stdin | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (file === "-") {
      const stdin = yield* Stdin
      const text = yield* stdin.readAll(
        "--client-secret-file - reads the client secret from stdin, and nothing is piped: pipe it, or name the file that holds it."
      )
      return { text, source: "stdin" }
    }
    const fs = yield* FileSystem.FileSystem
    const size = Number((yield* fs.stat(file)).size)
    if (size > SecretFileMaxBytes) {
      return yield* new InvalidRequest({ detail: `${file} is ${size} bytes; a client secret is at most ${MaxClientSecretLength} characters.` })
    }
    return { text: yield* fs.readFileString(file), source: file }
  }).pipe(
    Effect.catchTag("PlatformError", (error) => Effect.fail(new InvalidRequest({ detail: `Cannot read ${file}: ${error.message}` }))),
    Effect.flatMap(({ source, text }) =>
      Result.match(parseClientSecret(text, source), {
        onFailure: (detail) => Effect.fail(new InvalidRequest({ detail })),
        onSuccess: (secret) => Effect.succeed(Redacted.make(secret))
      })
    )
  )

const ssoSetCommand = Command.make(
  "set",
  {
    tenant: tenantOption,
    issuer: Flag.String("issuer").pipe(
      Flag.withMetavar("url"),
      Flag.withSchema(IssuerUrl),
      Flag.withDescription("The provider's issuer, as its discovery document (/.well-known/openid-configuration) states it.")
    ),
    clientId: Flag.String("client-id").pipe(
      Flag.withMetavar("id"),
      Flag.withSchema(SsoConnectionRequest.fields.clientId),
      Flag.withDescription("The client id the provider gave the portfolio.")
    ),
    clientSecretFile: fileOption("client-secret-file", { mustExist: false }).pipe(
      Flag.withDescription("The file holding the client secret on one line, or - to read it from stdin; never printed.")
    ),
    domains: domainsOption,
    defaultRole: choice("default-role", ArbRole.literals).pipe(
      Flag.optional,
      Flag.withDescription("The role of a person no mapping gives one (default viewer).")
    ),
    roles: rolesOptions,
    required: switchFlag("required").pipe(
      Flag.withDescription("Sign the people of these domains in only through the provider: their passwords are refused, the break-glass accounts' excepted.")
    ),
    breakGlass: Flag.String("break-glass").pipe(
      Flag.withMetavar("emails"),
      Flag.mapEffect(parsed(parseBreakGlass)),
      Flag.optional,
      Flag.withDescription("Comma-separated e-mails of accounts that may still sign in with a password, for when the provider is down.")
    ),
    emailVerifiedClaim: Flag.String("email-verified-claim").pipe(
      Flag.withMetavar("claim"),
      Flag.mapEffect(parsed(parseRoleClaim)),
      Flag.optional,
      Flag.withDescription("The id token's claim that says the e-mail is verified: email_verified (default; Okta, Google, Keycloak), xms_edov for Microsoft Entra ID.")
    ),
    json
  },
  (args) =>
    readClientSecret(args.clientSecretFile).pipe(
      Effect.flatMap((clientSecret) =>
        setSso({
          tenant: args.tenant,
          issuer: args.issuer,
          clientId: args.clientId,
          clientSecret,
          domains: args.domains,
          defaultRole: Option.getOrUndefined(args.defaultRole),
          roleClaim: Option.getOrNull(args.roles.claim),
          roleMap: Option.getOrElse(args.roles.map, () => []),
          required: args.required,
          breakGlass: Option.getOrElse(args.breakGlass, () => []),
          emailVerifiedClaim: Option.getOrUndefined(args.emailVerifiedClaim)
        })
      ),
      Effect.flatMap((connection) => print(ssoSet(args.tenant)(connection), args.json))
    )
).pipe(
  Command.validate(({ roles }) =>
    Option.isSome(roles.map) && Option.isNone(roles.claim) ? Effect.fail(usageError(RoleMapWithoutClaim)) : Effect.void
  ),
  Command.withDescription(
    "Set or replace a tenant's single sign-on connection, whole: what is not given takes its default. Prints the redirect URI to register at the provider."
  )
)

const ssoShow = Command.make(
  "show",
  { tenant: tenantOption, json },
  (args) => getSso(args.tenant).pipe(Effect.flatMap((connection) => print(ssoShown(args.tenant)(connection), args.json)))
).pipe(Command.withDescription("A tenant's single sign-on connection, with the redirect URI to register at the provider; never its client secret."))

const ssoDisable = Command.make(
  "disable",
  { tenant: tenantOption, json },
  (args) => disableSso(args.tenant).pipe(Effect.flatMap(() => print(ssoDisabled(args.tenant), args.json)))
).pipe(Command.withDescription("Delete a tenant's single sign-on connection and its client secret: its people sign in with passwords again."))

const ssoConfirmDomains = Command.make(
  "confirm-domains",
  { tenant: tenantOption, json },
  (args) => confirmSsoDomains(args.tenant).pipe(Effect.flatMap((connection) => print(ssoDomainsConfirmed(args.tenant)(connection), args.json)))
).pipe(Command.withDescription(
  "Vouch for the domains of a connection a tenant-admin set, once you checked the company owns them: a work e-mail of them then leads to this workspace's provider at the console's sign-in."
))

export const ssoCommand = Command.make("sso").pipe(
  Command.withDescription("Single sign-on: the tenant's OpenID Connect provider (provisioning admin API)."),
  Command.withSubcommands([ssoSetCommand, ssoShow, ssoConfirmDomains, ssoDisable])
)
