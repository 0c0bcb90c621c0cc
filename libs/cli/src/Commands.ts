import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
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
import { Effect, type Layer, Option, Schema } from "effect"
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
import { json, tenantOption } from "./SharedOptions.js"
import { ssoCommand } from "./SsoCommands.js"
import { Stdin } from "./Stdin.js"
import { webhookCommand } from "./WebhookCommands.js"

const count = (name: string, fallback: number, description: string) =>
  Options.integer(name).pipe(
    Options.withSchema(Schema.Int.pipe(Schema.between(0, 100_000))),
    Options.withDefault(fallback),
    Options.withDescription(description)
  )

const tenantCreate = Command.make(
  "create",
  {
    slug: Args.text({ name: "slug" }).pipe(Args.withSchema(TenantSlug), Args.withDescription("Slug of the new tenant.")),
    adminEmail: Options.text("admin-email").pipe(Options.withSchema(Email), Options.withDescription("E-mail of its first tenant-admin.")),
    json
  },
  (args) => createTenant({ slug: args.slug, adminEmail: args.adminEmail }).pipe(Effect.flatMap((created) => print(tenantCreated(created), args.json)))
).pipe(Command.withDescription(
  "Create a tenant and its first tenant-admin; prints the tenant id, the admin's userSub, and whether a link to set a password was mailed to the admin (not when their account already has one)."
))

const tenantWelcome = Command.make(
  "welcome",
  {
    slug: Args.text({ name: "slug" }).pipe(Args.withSchema(TenantSlug), Args.withDescription("Slug of the tenant.")),
    email: Options.text("email").pipe(Options.withSchema(Email), Options.withDescription("E-mail of a tenant-admin who never set a password.")),
    json
  },
  (args) => resendWelcome({ slug: args.slug, email: args.email }).pipe(Effect.flatMap((welcome) => print(welcomeResent(args.slug, args.email, welcome), args.json)))
).pipe(Command.withDescription(
  "Mail a tenant-admin who never set a password a new link to set one (theirs expired or was lost); earlier links stop working."
))

const memberEmail = Options.text("email").pipe(Options.withSchema(Email), Options.withDescription("E-mail of a member of the tenant."))
const scopeOption = Options.choice("scope", Scope.literals).pipe(Options.withDescription("read or write (write includes read)."))
const daysOption = Options.integer("days").pipe(
  Options.withSchema(Schema.Int.pipe(Schema.between(1, PatMaxDays))),
  Options.optional,
  Options.withDescription(`Lifetime in days, 1 to ${PatMaxDays} (default ${PatDefaultDays}).`)
)
const requestId = Args.text({ name: "request-id" }).pipe(Args.withSchema(PatRequestId), Args.withDescription("The PAT request's id."))

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
    justification: Options.text("justification").pipe(
      Options.withSchema(PatJustification),
      Options.withDescription(`Why the member needs the token, ${PatJustificationMinLength} to ${PatJustificationMaxLength} characters.`)
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
    status: Options.choice("status", PatRequestStatus.literals).pipe(Options.optional, Options.withDescription("Only the requests in this state.")),
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
    reason: Options.text("reason").pipe(Options.withSchema(PatDenialReason), Options.withDescription("Why, for the requester: 1 to 500 characters.")),
    json
  },
  (args) => denyPatRequest({ id: args.id, reason: args.reason }).pipe(Effect.flatMap((denied) => print(patRequestDenied(denied), args.json)))
).pipe(Command.withDescription("Deny a pending PAT request with a reason the requester reads."))

const patRevoke = Command.make(
  "revoke",
  { tokenOrId: Args.text({ name: "token-or-id" }).pipe(Args.withDescription("The token itself or its id.")), json },
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
    file: Options.file("file", { exists: "yes" }).pipe(Options.optional, Options.withDescription("JSON document; read from stdin when absent.")),
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
    application: Options.text("application").pipe(Options.withSchema(ApplicationCode), Options.withDescription("Code of the application.")),
    title: Options.text("title").pipe(Options.withSchema(DasInput.fields.title), Options.withDescription("Title of the DAS, 1 to 200 characters on one line.")),
    file: Options.file("file", { exists: "yes" }).pipe(
      Options.optional,
      Options.withDescription("JSON object, the DAS content (at most 64 KiB as compact JSON); no content when absent.")
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
    to: Options.text("to").pipe(Options.optional, Options.withDescription("Only the mail sent to this address.")),
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
 * Parses `argv` (`[runtime, script, ...args]`), runs the command and answers the exit code; a
 * failure is written on stderr as a problem. `clients` is built only once
 * a command is about to run, so `--help` and usage errors need no configuration.
 */
export const runCli = <E, R>(argv: ReadonlyArray<string>, clients: Layer.Layer<AdminClients, E, R>) =>
  Command.run(portfolio.pipe(Command.provide(clients)), { name: "portfolio", version: packageJson.version })(argv).pipe(
    Effect.as(0),
    Effect.catchAllCause(reportFailure)
  )
