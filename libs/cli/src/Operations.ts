import {
  type ApplicationInput,
  ApprovePatRequest,
  CreatePatRequest,
  CreateTenantRequest,
  type DasContent,
  DasInput,
  DemoSeedRequest,
  DenyPatRequest,
  NewPatRequest,
  ResendWelcomeRequest,
  RevokePatRequest,
  type PatRequestStatus,
  type Scope
} from "@portfolio/domain"
import { Effect } from "effect"
import { AdminClients } from "./AdminClients.js"

/**
 * The operator's use cases, shared by the CLI commands and the local launcher. Each one is a thin
 * composition of admin API calls; the services own every rule.
 */

export const getTenant = Effect.fn("getTenant")(function*(slug: string) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.getTenant({ params: { slug } })
})

export const createTenant = Effect.fn("createTenant")(function*(input: { readonly slug: string; readonly adminEmail: string }) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.createTenant({ payload: new CreateTenantRequest(input) })
})

export const resendWelcome = Effect.fn("resendWelcome")(function*(input: { readonly slug: string; readonly email: string }) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.resendWelcome({ params: { slug: input.slug }, payload: new ResendWelcomeRequest({ email: input.email }) })
})

export interface CreatePatInput {
  readonly tenant: string
  readonly email: string
  readonly scope: Scope
  readonly days?: number | undefined
}

/** Resolves the member in provisioning (who they are, their role), then mints the token at the gateway. */
export const createPat = Effect.fn("createPat")(function*(input: CreatePatInput) {
  const { gateway, provisioning } = yield* AdminClients
  const { member, tenant } = yield* provisioning.provisioningAdmin.findMember({ params: { slug: input.tenant, email: input.email } })
  const pat = yield* gateway.gatewayAdmin.createPat({
    payload: new CreatePatRequest({
      tenantId: tenant.id,
      userSub: member.userSub,
      email: member.userEmail,
      role: member.arbRole,
      scope: input.scope,
      ...(input.days === undefined ? {} : { days: input.days })
    })
  })
  return { pat, tenant, member }
})

export interface RequestPatInput extends CreatePatInput {
  readonly justification: string
}

/**
 * Files a PAT request on behalf of a member, as the console does for a signed-in one: the member
 * is resolved in provisioning (who they are, their role), the gateway keeps the request pending.
 */
export const requestPat = Effect.fn("requestPat")(function*(input: RequestPatInput) {
  const { gateway, provisioning } = yield* AdminClients
  const { member, tenant } = yield* provisioning.provisioningAdmin.findMember({ params: { slug: input.tenant, email: input.email } })
  const request = yield* gateway.gatewayAdmin.filePatRequest({
    payload: new NewPatRequest({
      tenantId: tenant.id,
      userSub: member.userSub,
      email: member.userEmail,
      role: member.arbRole,
      scope: input.scope,
      justification: input.justification,
      ...(input.days === undefined ? {} : { days: input.days })
    })
  })
  return { request, tenant }
})

export const listPatRequests = Effect.fn("listPatRequests")(function*(input: { readonly tenant: string; readonly status: PatRequestStatus | undefined }) {
  const { gateway } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  const requests = yield* gateway.gatewayAdmin.listPatRequests({
    query: { tenantId: tenant.id, ...(input.status === undefined ? {} : { status: input.status }) }
  })
  return { requests, tenant }
})

/** The operator approves: the gateway records the approver as the subject this CLI signs with. */
export const approvePatRequest = Effect.fn("approvePatRequest")(function*(id: string) {
  const { gateway } = yield* AdminClients
  return yield* gateway.gatewayAdmin.approvePatRequest({ params: { id }, payload: new ApprovePatRequest({}) })
})

export const denyPatRequest = Effect.fn("denyPatRequest")(function*(input: { readonly id: string; readonly reason: string }) {
  const { gateway } = yield* AdminClients
  return yield* gateway.gatewayAdmin.denyPatRequest({ params: { id: input.id }, payload: new DenyPatRequest({ reason: input.reason }) })
})

export const revokePat = Effect.fn("revokePat")(function*(tokenOrId: string) {
  const { gateway } = yield* AdminClients
  return yield* gateway.gatewayAdmin.revokePat({ payload: new RevokePatRequest({ tokenOrId }) })
})

export const seedDemo = Effect.fn("seedDemo")(function*(input: {
  readonly tenant: string
  readonly applications: number
  readonly functions: number
}) {
  const { referential } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  const result = yield* referential.referentialAdmin.seedDemo({
    params: { tenantId: tenant.id },
    payload: new DemoSeedRequest({ applications: input.applications, functions: input.functions })
  })
  return { tenant, result }
})

/** The mail provisioning keeps when no SMTP server is configured: the magic links, for local use. */
export const listMail = Effect.fn("listMail")(function*(to: string | undefined) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.listOutboundMail({ query: to === undefined ? {} : { to } })
})

/** Every invitation of a tenant, whatever its status, newest first. */
export const listInvitations = Effect.fn("listInvitations")(function*(tenant: string) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.listTenantInvitations({ params: { slug: tenant } })
})

export const putApplication = Effect.fn("putApplication")(function*(input: {
  readonly tenant: string
  readonly code: string
  readonly application: ApplicationInput
}) {
  const { referential } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  const application = yield* referential.referentialAdmin.putApplication({
    params: { tenantId: tenant.id, code: input.code },
    payload: input.application
  })
  return { tenant, application }
})

/**
 * Creates a DAS of an application and submits it at once: the referential announces it
 * (`das.submitted`) with the operator as its submitter. A DRAFT left by a refused submission
 * stays a DRAFT; nothing else refers to it.
 */
export const submitDas = Effect.fn("submitDas")(function*(input: {
  readonly tenant: string
  readonly applicationCode: string
  readonly title: string
  readonly content: DasContent | undefined
}) {
  const { referential } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  const draft = yield* referential.referentialAdmin.createDas({
    params: { tenantId: tenant.id },
    payload: new DasInput({
      applicationCode: input.applicationCode,
      title: input.title,
      ...(input.content === undefined ? {} : { content: input.content })
    })
  })
  const das = yield* referential.referentialAdmin.submitDas({ params: { tenantId: tenant.id, id: draft.id } })
  return { tenant, das }
})
