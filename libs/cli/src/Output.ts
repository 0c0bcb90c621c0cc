import {
  Application,
  type CreatedPat,
  Das,
  Invitation,
  type DemoSeedResult,
  type Member,
  OutboundMail,
  type RevokedPat,
  type Tenant,
  type TenantWithAdmin
} from "@portfolio/domain"
import { Console, DateTime, Schema } from "effect"

/** One command's answer in both forms: a JSON document (`--json`) and lines for a person. */
export interface Output {
  readonly json: unknown
  readonly human: ReadonlyArray<string>
}

export const print = (output: Output, json: boolean) =>
  json ? Console.log(JSON.stringify(output.json)) : Console.log(output.human.join("\n"))

const iso = DateTime.formatIso

export const tenantCreated = ({ admin, tenant }: TenantWithAdmin): Output => ({
  json: { tenantId: tenant.id, slug: tenant.slug, adminEmail: admin.userEmail, adminUserSub: admin.userSub, createdAt: iso(tenant.createdAt) },
  human: [
    `Tenant ${tenant.slug} created.`,
    `  tenant id:     ${tenant.id}`,
    `  admin:         ${admin.userEmail} (${admin.arbRole})`,
    `  admin userSub: ${admin.userSub}`
  ]
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

const encodeApplication = Schema.encodeSync(Application)

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

const encodeMail = Schema.encodeSync(Schema.Array(OutboundMail))

export const mailListed = (mail: ReadonlyArray<OutboundMail>): Output => ({
  json: encodeMail(mail),
  human: mail.length === 0
    ? ["No mail kept."]
    : mail.flatMap((m) => [`#${m.id}  ${iso(m.createdAt)}  to ${m.to}: ${m.subject}`, ...m.text.split("\n").map((line) => `    ${line}`), ""])
})

const encodeInvitations = Schema.encodeSync(Schema.Array(Invitation))

const invitationLine = (invitation: Invitation) => {
  const settled = invitation.acceptedAt ?? invitation.revokedAt
  const when = settled === null ? `expires ${iso(invitation.expiresAt)}` : `${invitation.status.toLowerCase()} ${iso(settled)}`
  return `${invitation.id}  ${invitation.status.padEnd(8)}  ${invitation.email} as ${invitation.arbRole}, by ${invitation.invitedByEmail}, created ${iso(invitation.createdAt)}, ${when}`
}

export const invitationsListed = (tenant: string, invitations: ReadonlyArray<Invitation>): Output => ({
  json: encodeInvitations(invitations),
  human: invitations.length === 0 ? [`No invitation in ${tenant}.`] : invitations.map(invitationLine)
})

const encodeDas = Schema.encodeSync(Das)

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
