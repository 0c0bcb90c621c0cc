import {
  Application,
  ApprovedPatRequest,
  type CreatedPat,
  Das,
  Invitation,
  type DemoSeedResult,
  type Member,
  OutboundMail,
  PatRequest,
  type PatRequestStatus,
  type RevokedPat,
  type Tenant,
  type TenantWithAdmin,
  type WelcomeLink
} from "@portfolio/domain"
import { DateTime, Schema } from "effect"
import { writeJson, writeLines } from "./Terminal.js"

/**
 * One command's answer in both forms: a JSON document (`--json`) and lines for a person. The lines
 * hold others' text as it is: `print` makes them safe for a terminal, not each command.
 */
export interface Output {
  readonly json: unknown
  readonly human: ReadonlyArray<string>
}

/**
 * `schema`'s JSON form, as the admin APIs send it (a date is its ISO string), for `--json`: a plain
 * `Schema.encodeSync` leaves a `DateTime` an object.
 */
export const encodeJson = <S extends Schema.Constraint & { readonly EncodingServices: never }>(schema: S) =>
  Schema.encodeSync(Schema.toCodecJson(schema))

/** How every command writes its answer (Terminal.ts: control characters shown, never acted on). */
export const print = (output: Output, json: boolean) => (json ? writeJson(output.json) : writeLines(output.human))

const iso = DateTime.formatIso

/**
 * What became of the admin's password: a link mailed (the welcome), none needed (null: the account
 * had a password already), or nothing said (a provisioning older than the field), which prints nothing.
 */
const welcomeLines = ({ admin, welcome }: TenantWithAdmin): ReadonlyArray<string> => {
  if (welcome === undefined) return []
  if (welcome === null) return [`No link was mailed: the account of ${admin.userEmail} already has a password.`]
  return [`A link to set a password was mailed to ${admin.userEmail}, valid until ${iso(welcome.expiresAt)}.`]
}

export const tenantCreated = (created: TenantWithAdmin): Output => {
  const { admin, tenant, welcome } = created
  return {
    json: {
      tenantId: tenant.id,
      slug: tenant.slug,
      adminEmail: admin.userEmail,
      adminUserSub: admin.userSub,
      createdAt: iso(tenant.createdAt),
      ...(welcome === undefined ? {} : { welcome: welcome === null ? null : { invitationId: welcome.invitationId, expiresAt: iso(welcome.expiresAt) } })
    },
    human: [
      `Tenant ${tenant.slug} created.`,
      `  tenant id:     ${tenant.id}`,
      `  admin:         ${admin.userEmail} (${admin.arbRole})`,
      `  admin userSub: ${admin.userSub}`,
      ...welcomeLines(created)
    ]
  }
}

export const welcomeResent = (slug: string, email: string, welcome: WelcomeLink): Output => ({
  json: { slug, email, invitationId: welcome.invitationId, expiresAt: iso(welcome.expiresAt) },
  human: [`A new link to set a password was mailed to ${email} (${slug}), valid until ${iso(welcome.expiresAt)}; earlier links no longer work.`]
})

export const patCreated = ({ member, pat, tenant }: { readonly pat: CreatedPat; readonly tenant: Tenant; readonly member: Member }): Output => ({
  json: {
    id: pat.id,
    token: pat.token,
    tokenPrefix: pat.tokenPrefix,
    scope: pat.scope,
    expiresAt: iso(pat.expiresAt),
    tenant: tenant.slug,
    email: member.userEmail,
    userSub: member.userSub
  },
  human: [
    `Personal access token for ${member.userEmail} in ${tenant.slug} (scope ${pat.scope}):`,
    "",
    `  ${pat.token}`,
    "",
    "It is shown this once; store it now.",
    `  id:      ${pat.id}`,
    `  expires: ${iso(pat.expiresAt)}`
  ]
})

const encodePatRequest = encodeJson(PatRequest)

export const patRequested = ({ request, tenant }: { readonly request: PatRequest; readonly tenant: Tenant }): Output => ({
  json: encodePatRequest(request),
  human: [
    `PAT request ${request.id} filed for ${request.email} in ${tenant.slug}: scope ${request.scope}, ${request.days} days, ${request.status}.`,
    `Approve it with \`portfolio pat approve ${request.id}\`, or deny it with \`portfolio pat deny ${request.id} --reason <text>\`.`
  ]
})

const decisionText = (request: PatRequest) => {
  if (request.status === "expired") return `expired undecided at ${iso(request.expiresAt)}`
  if (request.status === "pending") return `awaiting a tenant-admin until ${iso(request.expiresAt)}`
  if (request.status === "closed") return `${request.reason ?? "closed undecided"}${request.decidedAt === null ? "" : ` (at ${iso(request.decidedAt)})`}`
  if (request.decidedAt === null || request.decidedBy === null) return "undecided"
  const by = `${request.decidedBy.email ?? request.decidedBy.userSub} (${request.decidedBy.role}) at ${iso(request.decidedAt)}`
  return request.status === "denied" ? `denied by ${by}: ${request.reason ?? ""}` : `approved by ${by}, token ${request.patId ?? ""}`
}

const patRequestLines = (request: PatRequest) => [
  `${request.id}  ${request.status.padEnd(8)}  ${request.email} (${request.role}), scope ${request.scope}, ${request.days} days, filed ${iso(request.createdAt)}; ${decisionText(request)}`,
  `    ${request.justification}`
]

export const patRequestsListed = (
  { requests, tenant }: { readonly requests: ReadonlyArray<PatRequest>; readonly tenant: Tenant },
  status: PatRequestStatus | undefined
): Output => ({
  json: requests.map((request) => encodePatRequest(request)),
  human: requests.length === 0 ? [`No${status === undefined ? "" : ` ${status}`} PAT request in ${tenant.slug}.`] : requests.flatMap(patRequestLines)
})

const encodeApproved = encodeJson(ApprovedPatRequest)

export const patRequestApproved = (approved: ApprovedPatRequest): Output => {
  const { pat, request } = approved
  return {
    json: encodeApproved(approved),
    human: [
      `PAT request ${request.id} approved: personal access token for ${request.email} (scope ${pat.scope}):`,
      "",
      `  ${pat.token}`,
      "",
      `It is shown this once; hand it to ${request.email} through a secure channel.`,
      `  id:      ${pat.id}`,
      `  expires: ${iso(pat.expiresAt)}`
    ]
  }
}

export const patRequestDenied = (request: PatRequest): Output => ({
  json: encodePatRequest(request),
  human: [`PAT request ${request.id} of ${request.email} denied: ${request.reason ?? ""}`]
})

export const patRevoked = (revoked: RevokedPat): Output => ({
  json: { id: revoked.id, revokedAt: iso(revoked.revokedAt) },
  human: [`Token ${revoked.id} revoked at ${iso(revoked.revokedAt)}.`]
})

export const demoSeeded = ({ result, tenant }: { readonly tenant: Tenant; readonly result: DemoSeedResult }): Output => ({
  json: { tenant: tenant.slug, tenantId: tenant.id, applications: result.applications, functions: result.functions, links: result.links },
  human: [
    `Seeded ${tenant.slug}: ${result.applications} applications, ${result.functions} business functions, ${result.links} links.`
  ]
})

const encodeApplication = encodeJson(Application)

export const applicationSaved = ({ application, tenant }: { readonly tenant: Tenant; readonly application: Application }): Output => ({
  json: encodeApplication(application),
  human: [
    `Application ${application.code} saved in ${tenant.slug}.`,
    `  name:                ${application.name}`,
    `  status:              ${application.status}`,
    `  criticality:         ${application.criticality}`,
    `  data classification: ${application.dataClassification}`,
    `  regulations:         ${application.regulations.length > 0 ? application.regulations : "(none)"}`
  ]
})

const encodeMail = encodeJson(Schema.Array(OutboundMail))

export const mailListed = (mail: ReadonlyArray<OutboundMail>): Output => ({
  json: encodeMail(mail),
  human: mail.length === 0
    ? ["No mail kept."]
    : mail.flatMap((m) => [`#${m.id}  ${iso(m.createdAt)}  to ${m.to}: ${m.subject}`, ...m.text.split("\n").map((line) => `    ${line}`), ""])
})

const encodeInvitations = encodeJson(Schema.Array(Invitation))

const invitationLine = (invitation: Invitation) => {
  const settled = invitation.acceptedAt ?? invitation.revokedAt
  const when = settled === null ? `expires ${iso(invitation.expiresAt)}` : `${invitation.status.toLowerCase()} ${iso(settled)}`
  return `${invitation.id}  ${invitation.status.padEnd(8)}  ${invitation.email} as ${invitation.arbRole}, by ${invitation.invitedByEmail}, created ${iso(invitation.createdAt)}, ${when}`
}

export const invitationsListed = (tenant: string, invitations: ReadonlyArray<Invitation>): Output => ({
  json: encodeInvitations(invitations),
  human: invitations.length === 0 ? [`No invitation in ${tenant}.`] : invitations.map(invitationLine)
})

const encodeDas = encodeJson(Das)

export const dasSubmitted = ({ das, tenant }: { readonly tenant: Tenant; readonly das: Das }): Output => ({
  json: encodeDas(das),
  human: [
    `DAS ${das.id} of ${das.applicationCode} submitted in ${tenant.slug}.`,
    `  title:        ${das.title}`,
    `  status:       ${das.status}`,
    `  submitted by: ${das.submittedBy ?? "(nobody)"}`,
    `  content:      ${das.content === null ? "(none)" : `${Object.keys(das.content).length} top-level fields`}`
  ]
})
