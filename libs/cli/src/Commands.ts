import { Argument, CliOutput, Command, Flag } from "effect/cli"
import {
  ApplicationCode,
  DasInput,
  Email,
  InvalidRequest,
  PatDefaultDays,
  PatDenialReason,
  PatJustification,
  PatJustificationMaxLength,
  PatJustificationMinLength,
  PatMaxDays,
  PatRequestId,
  PatRequestStatus,
  Scope,
  TenantSlug
} from "@portfolio/domain"
import { Effect, FileSystem, type Layer, Option, Schema } from "effect"
import packageJson from "../package.json" with { type: "json" }
import type { AdminClients } from "./AdminClients.js"
import { parseApplicationDocument } from "./ApplicationDocument.js"
import { readDasContent } from "./DasDocument.js"
import { reportFailure } from "./Failure.js"
import {
  approvePatRequest,
  createPat,
  createTenant,
  denyPatRequest,
  listInvitations,
  listMail,
  listPatRequests,
  putApplication,
  requestPat,
  resendWelcome,
  revokePat,
  seedDemo,
  submitDas
} from "./Operations.js"
import {
  applicationSaved,
  dasSubmitted,
  demoSeeded,
  invitationsListed,
  mailListed,
  patCreated,
  patRequestApproved,
  patRequestDenied,
  patRequested,
  patRequestsListed,
  patRevoked,
  print,
  tenantCreated,
  welcomeResent
} from "./Output.js"
import { auditCommand } from "./AuditCommand.js"
import { partnerCommand } from "./PartnerCommands.js"
import { scimCommand } from "./ScimCommands.js"
import { choice, existingFile, json, tenantOption } from "./SharedOptions.js"
import { ssoCommand } from "./SsoCommands.js"
import { Stdin } from "./Stdin.js"
import { writeErrorLines, writeLines } from "./Terminal.js"
import { webhookCommand } from "./WebhookCommands.js"

const count = (name: string, fallback: number, description: string) =>
  Flag.Int(name).pipe(
    Flag.withSchema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 }))),
    Flag.withDefault(fallback),
    Flag.withDescription(description)
  )

const tenantCreate = Command.make(
  "create",
  {
    slug: Argument.String("slug").pipe(Argument.withSchema(TenantSlug), Argument.withDescription("Slug of the new tenant.")),
    adminEmail: Flag.String("admin-email").pipe(Flag.withSchema(Email), Flag.withDescription("E-mail of its first tenant-admin.")),
    json
  },
  (args) => createTenant({ slug: args.slug, adminEmail: args.adminEmail }).pipe(Effect.flatMap((created) => print(tenantCreated(created), args.json)))
).pipe(Command.withDescription(
  "Create a tenant and its first tenant-admin; prints the tenant id, the admin's userSub, and whether a link to set a password was mailed to the admin (not when their account already has one)."
))

const tenantWelcome = Command.make(
  "welcome",
  {
    slug: Argument.String("slug").pipe(Argument.withSchema(TenantSlug), Argument.withDescription("Slug of the tenant.")),
    email: Flag.String("email").pipe(Flag.withSchema(Email), Flag.withDescription("E-mail of a tenant-admin who never set a password.")),
    json
  },
  (args) => resendWelcome({ slug: args.slug, email: args.email }).pipe(Effect.flatMap((welcome) => print(welcomeResent(args.slug, args.email, welcome), args.json)))
).pipe(Command.withDescription(
  "Mail a tenant-admin who never set a password a new link to set one (theirs expired or was lost); earlier links stop working."
))

const memberEmail = Flag.String("email").pipe(Flag.withSchema(Email), Flag.withDescription("E-mail of a member of the tenant."))
const scopeOption = choice("scope", Scope.literals).pipe(Flag.withDescription("read or write (write includes read)."))
const daysOption = Flag.Int("days").pipe(
  Flag.withSchema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: PatMaxDays }))),
  Flag.optional,
  Flag.withDescription(`Lifetime in days, 1 to ${PatMaxDays} (default ${PatDefaultDays}).`)
)
const requestId = Argument.String("request-id").pipe(Argument.withSchema(PatRequestId), Argument.withDescription("The PAT request's id."))

const patCreate = Command.make(
  "create",
  { tenant: tenantOption, email: memberEmail, scope: scopeOption, days: daysOption, json },
  (args) =>
    createPat({ tenant: args.tenant, email: args.email, scope: args.scope, days: Option.getOrUndefined(args.days) }).pipe(
      Effect.flatMap((created) => print(patCreated(created), args.json))
    )
).pipe(Command.withDescription("Mint a personal access token for a member; the token is printed once."))

const patRequest = Command.make(
  "request",
  {
    tenant: tenantOption,
    email: memberEmail,
    scope: scopeOption,
    days: daysOption,
    justification: Flag.String("justification").pipe(
      Flag.withSchema(PatJustification),
      Flag.withDescription(`Why the member needs the token, ${PatJustificationMinLength} to ${PatJustificationMaxLength} characters.`)
    ),
    json
  },
  (args) =>
    requestPat({
      tenant: args.tenant,
      email: args.email,
      scope: args.scope,
      days: Option.getOrUndefined(args.days),
      justification: args.justification
    }).pipe(Effect.flatMap((filed) => print(patRequested(filed), args.json)))
).pipe(Command.withDescription(
  "File a member's justified request for a personal access token; prints the request's id. A viewer may request read only."
))

const patRequests = Command.make(
  "requests",
  {
    tenant: tenantOption,
    status: choice("status", PatRequestStatus.literals).pipe(Flag.optional, Flag.withDescription("Only the requests in this state.")),
    json
  },
  (args) =>
    listPatRequests({ tenant: args.tenant, status: Option.getOrUndefined(args.status) }).pipe(
      Effect.flatMap((listed) => print(patRequestsListed(listed, Option.getOrUndefined(args.status)), args.json))
    )
).pipe(Command.withDescription("The PAT requests of a tenant, newest first, with their justification and decision."))

const patApprove = Command.make(
  "approve",
  { id: requestId, json },
  (args) => approvePatRequest(args.id).pipe(Effect.flatMap((approved) => print(patRequestApproved(approved), args.json)))
).pipe(Command.withDescription(
  "Approve a pending PAT request as the operator: mints the requester's token and prints it once. A request is decided once (409 afterwards)."
))

const patDeny = Command.make(
  "deny",
  {
    id: requestId,
    reason: Flag.String("reason").pipe(Flag.withSchema(PatDenialReason), Flag.withDescription("Why, for the requester: 1 to 500 characters.")),
    json
  },
  (args) => denyPatRequest({ id: args.id, reason: args.reason }).pipe(Effect.flatMap((denied) => print(patRequestDenied(denied), args.json)))
).pipe(Command.withDescription("Deny a pending PAT request with a reason the requester reads."))

const patRevoke = Command.make(
  "revoke",
  { tokenOrId: Argument.String("token-or-id").pipe(Argument.withDescription("The token itself or its id.")), json },
  (args) => revokePat(args.tokenOrId).pipe(Effect.flatMap((revoked) => print(patRevoked(revoked), args.json)))
).pipe(Command.withDescription("Revoke a personal access token at once."))

const seedDemoCommand = Command.make(
  "demo",
  {
    tenant: tenantOption,
    applications: count("applications", 200, "Number of applications to generate."),
    functions: count("functions", 500, "Number of business functions to generate."),
    json
  },
  (args) =>
    seedDemo({ tenant: args.tenant, applications: args.applications, functions: args.functions }).pipe(
      Effect.flatMap((seeded) => print(demoSeeded(seeded), args.json))
    )
).pipe(Command.withDescription("Fill a tenant's referential with generated demo data."))

const readDocument = (file: Option.Option<string>): Effect.Effect<string, InvalidRequest, Stdin | FileSystem.FileSystem> =>
  Option.match(file, {
    onNone: () => Effect.flatMap(Stdin, (stdin) => stdin.readAll("No --file given and nothing piped on stdin: pipe the JSON document or pass --file.")),
    onSome: (path) =>
      Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(path)).pipe(
        Effect.mapError((error) => new InvalidRequest({ detail: `Cannot read ${path}: ${error.message}` }))
      )
  })

const appPut = Command.make(
  "put",
  {
    tenant: tenantOption,
    file: existingFile("file").pipe(Flag.optional, Flag.withDescription("JSON document; read from stdin when absent.")),
    json
  },
  (args) =>
    readDocument(args.file).pipe(
      Effect.flatMap(parseApplicationDocument),
      Effect.flatMap(({ application, code }) => putApplication({ tenant: args.tenant, code, application })),
      Effect.flatMap((saved) => print(applicationSaved(saved), args.json))
    )
).pipe(
  Command.withDescription(
    "Create or replace an application from a JSON document holding `code` and the application fields. Absent fields keep their value."
  )
)

const dasSubmit = Command.make(
  "submit",
  {
    tenant: tenantOption,
    application: Flag.String("application").pipe(Flag.withSchema(ApplicationCode), Flag.withDescription("Code of the application.")),
    title: Flag.String("title").pipe(Flag.withSchema(DasInput.fields.title), Flag.withDescription("Title of the DAS, 1 to 200 characters on one line.")),
    file: existingFile("file").pipe(
      Flag.optional,
      Flag.withDescription("JSON object, the DAS content (at most 64 KiB as compact JSON); no content when absent.")
    ),
    json
  },
  (args) =>
    Effect.gen(function*() {
      const content = Option.isSome(args.file) ? yield* readDasContent(args.file.value) : undefined
      const submitted = yield* submitDas({ tenant: args.tenant, applicationCode: args.application, title: args.title, content })
      yield* print(dasSubmitted(submitted), args.json)
    })
).pipe(Command.withDescription("Create a DAS (dossier d'architecture) of an application and submit it; the referential announces das.submitted."))

const mailList = Command.make(
  "list",
  {
    to: Flag.String("to").pipe(Flag.optional, Flag.withDescription("Only the mail sent to this address.")),
    json
  },
  (args) => listMail(Option.getOrUndefined(args.to)).pipe(Effect.flatMap((mail) => print(mailListed(mail), args.json)))
).pipe(Command.withDescription("The invitation mail provisioning kept (no SMTP_URL), newest first: the magic links, for local use."))

const invitationsList = Command.make(
  "list",
  { tenant: tenantOption, json },
  (args) => listInvitations(args.tenant).pipe(Effect.flatMap((invitations) => print(invitationsListed(args.tenant, invitations), args.json)))
).pipe(Command.withDescription("Every invitation of a tenant, whatever its status (PENDING, ACCEPTED, REVOKED, EXPIRED), newest first."))

export const portfolio = Command.make("portfolio").pipe(
  Command.withDescription("Operator commands of the architecture portfolio."),
  Command.withSubcommands([
    Command.make("tenant").pipe(Command.withDescription("Tenants (provisioning admin API)."), Command.withSubcommands([tenantCreate, tenantWelcome])),
    ssoCommand,
    Command.make("pat").pipe(Command.withDescription("Personal access tokens (gateway admin API)."), Command.withSubcommands([patCreate, patRevoke, patRequest, patRequests, patApprove, patDeny])),
    partnerCommand,
    scimCommand,
    auditCommand,
    Command.make("seed").pipe(Command.withDescription("Demo data (referential admin API)."), Command.withSubcommands([seedDemoCommand])),
    Command.make("app").pipe(Command.withDescription("Applications (referential admin API)."), Command.withSubcommands([appPut])),
    Command.make("das").pipe(Command.withDescription("Dossiers d'architecture (referential admin API)."), Command.withSubcommands([dasSubmit])),
    Command.make("invitations").pipe(
      Command.withDescription("Invitations of a tenant (provisioning admin API)."),
      Command.withSubcommands([invitationsList])
    ),
    Command.make("mail").pipe(Command.withDescription("Mail kept by provisioning (provisioning admin API)."), Command.withSubcommands([mailList])),
    webhookCommand
  ])
)

/**
 * How the parser speaks, as the CLI always has: help and the version on stdout, a usage error as
 * its sentences alone on stderr, without the help around them, so stdout stays empty when a
 * command is refused. Both go through Terminal.ts (the values quoted in an error are the user's).
 */
const presenter: CliOutput.Presenter = {
  present: (event) => {
    switch (event._tag) {
      case "Help":
        return writeLines(plainFormatter.formatHelpDoc(event.helpDoc).split("\n"))
      case "InvalidInvocation":
        return writeErrorLines(event.errors.map((error) => error.message))
      case "Version":
        return writeLines([event.version])
    }
  }
}

const plainFormatter = CliOutput.defaultFormatter({ colors: false })

/**
 * Parses `argv` (`[runtime, script, ...args]`), runs the command and answers the exit code; a
 * failure is written on stderr as a problem. `clients` is built only once
 * a command is about to run, so `--help` and usage errors need no configuration.
 */
export const runCli = <E, R>(argv: ReadonlyArray<string>, clients: Layer.Layer<AdminClients, E, R>) =>
  Command.runWith(portfolio.pipe(Command.provide(clients)), { version: packageJson.version })(argv.slice(2)).pipe(
    Effect.provideService(CliOutput.Presenter, presenter),
    Effect.as(0),
    Effect.catchCause(reportFailure)
  )
