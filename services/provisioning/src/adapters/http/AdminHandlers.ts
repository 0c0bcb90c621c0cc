import { HttpApiBuilder } from "effect/http-api"
import { Caller, ProvisioningAdminApi } from "@portfolio/domain"
import { wholeOrPage } from "@portfolio/platform/http"
import { Effect, Redacted } from "effect"
import { callerFromRecords } from "../../usecases/Authorization.js"
import { createInvitation, listInvitations, listInvitationsPage, revokeInvitation } from "../../usecases/Invitations.js"
import { listOutboundMail } from "../../usecases/Mail.js"
import { listMembers, listMembersPage, removeMember } from "../../usecases/Members.js"
import { listSecurityEvents } from "../../usecases/SecurityLog.js"
import { checkSignIn, findFailedSignInTenants, getAccount } from "../../usecases/SignIn.js"
import { completeSsoSignIn, confirmSsoDomains, disableSsoConnection, findSsoTenants, getSsoConnection, setSsoConnection, startSsoSignIn } from "../../usecases/SingleSignOn.js"
import { disableSsoConnectionAs, getSsoConnectionAs, setSsoConnectionAs } from "../../usecases/SingleSignOnAsMember.js"
import { createTenant, findMember, findMembership, getTenant, listTenantInvitations, provisionSsoMember, resendWelcome } from "../../usecases/Tenants.js"
import { announceRetry } from "./PublicHandlers.js"
import { adminOrigin } from "./RequestOrigin.js"

export const AdminHandlersLive = HttpApiBuilder.group(ProvisioningAdminApi, "provisioningAdmin", (handlers) =>
  handlers
    // The operator's assertion names them (`operator:<os user>` from the CLI): the welcome link's
    // inviter, and the actor of its security log entry.
    .handle("createTenant", ({ payload }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => createTenant(payload, operator.subject, origin)))
    .handle("resendWelcome", ({ params, payload }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => resendWelcome(params.slug, payload.email, operator.subject, origin)))
    .handle("getTenant", ({ params }) => getTenant(params.slug))
    .handle("findMember", ({ params }) => findMember(params.slug, params.email))
    .handle("findMembership", ({ params }) => findMembership(params.tenantId, params.userSub))
    .handle("provisionSsoMember", ({ params, payload }) =>
      provisionSsoMember({ slug: params.slug, ...payload }))
    .handle("listTenantInvitations", ({ params }) => listTenantInvitations(params.slug))
    // Redacted from here on: the password reaches no log, span or error past this point.
    .handle("checkSignIn", ({ payload }) => checkSignIn(payload.email, Redacted.make(payload.password)))
    .handle("findFailedSignInTenants", ({ payload }) => findFailedSignInTenants(payload.email))
    .handle("getAccount", ({ params }) => getAccount(params.subject))
    .handle("listProvisioningSecurityEvents", ({ params, query }) =>
      listSecurityEvents(params.tenantId, query))
    .handle("setSsoConnection", ({ params, payload }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => setSsoConnection(params.slug, payload, operator.subject, origin)))
    .handle("getSsoConnection", ({ params }) => getSsoConnection(params.slug))
    .handle("confirmSsoDomains", ({ params }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => confirmSsoDomains(params.slug, operator.subject, origin)))
    .handle("findSsoTenants", ({ payload }) => findSsoTenants(payload.email))
    .handle("startSsoSignIn", ({ params }) => startSsoSignIn(params.slug))
    .handle("completeSsoSignIn", ({ params, payload }) => completeSsoSignIn(params.slug, payload.state, payload.callbackUrl))
    .handle("disableSsoConnection", ({ params }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => disableSsoConnection(params.slug, operator.subject, origin)))
    .handle("listOutboundMail", ({ query }) => listOutboundMail(query.to))
    // The console's: the public use cases themselves, for the member the console names, so that
    // none of their rules (authorization on the records, the hourly count, the last admin, the
    // outbox event, the mail and its inviter) has a second copy here. No origin: the console logs
    // these itself, with the member's browser address, and provisioning does not log them again.
    .handle("listMembersAs", ({ params, query }) =>
      Effect.flatMap(callerFromRecords(params.tenantId, query.actorSub), (caller) =>
        wholeOrPage(query, () => listMembers(caller), () => listMembersPage(caller, query))))
    .handle("listInvitationsAs", ({ params, query }) =>
      Effect.flatMap(callerFromRecords(params.tenantId, query.actorSub), (caller) =>
        wholeOrPage(query, () => listInvitations(caller), () => listInvitationsPage(caller, query))))
    .handle("inviteAs", ({ params, payload: { actorSub, ...invitation } }) =>
      Effect.flatMap(callerFromRecords(params.tenantId, actorSub), (caller) =>
        createInvitation(caller, invitation).pipe(Effect.tapErrorTag("RateLimited", () => announceRetry(caller)))))
    .handle("revokeInvitationAs", ({ params, payload }) =>
      Effect.flatMap(callerFromRecords(params.tenantId, payload.actorSub), (caller) => revokeInvitation(caller, params.id)))
    .handle("removeMemberAs", ({ params, payload }) =>
      Effect.flatMap(callerFromRecords(params.tenantId, payload.actorSub), (caller) => removeMember(caller, params.userSub)))
    .handle("getSsoConnectionAs", ({ params, query }) =>
      Effect.flatMap(callerFromRecords(params.tenantId, query.actorSub), (caller) => getSsoConnectionAs(caller)))
    .handle("setSsoConnectionAs", ({ params, payload: { actorSub, ...connection } }) =>
      Effect.flatMap(callerFromRecords(params.tenantId, actorSub), (caller) => setSsoConnectionAs(caller, connection)))
    .handle("disableSsoConnectionAs", ({ params, payload }) =>
      Effect.flatMap(callerFromRecords(params.tenantId, payload.actorSub), (caller) => disableSsoConnectionAs(caller))))
