import { HttpApiBuilder } from "@effect/platform"
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
import { announceRetry } from "./InvitationsHttp.js"
import { adminOrigin } from "./RequestOrigin.js"

export const ProvisioningAdminHttpLive = HttpApiBuilder.group(ProvisioningAdminApi, "provisioningAdmin", (handlers) =>
  handlers
    // The operator's assertion names them (`operator:<os user>` from the CLI): the welcome link's
    // inviter, and the actor of its security log entry.
    .handle("createTenant", ({ payload }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => createTenant(payload, operator.subject, origin)))
    .handle("resendWelcome", ({ path, payload }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => resendWelcome(path.slug, payload.email, operator.subject, origin)))
    .handle("getTenant", ({ path }) => getTenant(path.slug))
    .handle("findMember", ({ path }) => findMember(path.slug, path.email))
    .handle("findMembership", ({ path }) => findMembership(path.tenantId, path.userSub))
    .handle("provisionSsoMember", ({ path, payload }) =>
      provisionSsoMember({ slug: path.slug, ...payload }))
    .handle("listTenantInvitations", ({ path }) => listTenantInvitations(path.slug))
    // Redacted from here on: the password reaches no log, span or error past this point.
    .handle("checkSignIn", ({ payload }) => checkSignIn(payload.email, Redacted.make(payload.password)))
    .handle("findFailedSignInTenants", ({ payload }) => findFailedSignInTenants(payload.email))
    .handle("getAccount", ({ path }) => getAccount(path.subject))
    .handle("listProvisioningSecurityEvents", ({ path, urlParams }) =>
      listSecurityEvents(path.tenantId, urlParams))
    .handle("setSsoConnection", ({ path, payload }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => setSsoConnection(path.slug, payload, operator.subject, origin)))
    .handle("getSsoConnection", ({ path }) => getSsoConnection(path.slug))
    .handle("confirmSsoDomains", ({ path }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => confirmSsoDomains(path.slug, operator.subject, origin)))
    .handle("findSsoTenants", ({ payload }) => findSsoTenants(payload.email))
    .handle("startSsoSignIn", ({ path }) => startSsoSignIn(path.slug))
    .handle("completeSsoSignIn", ({ path, payload }) => completeSsoSignIn(path.slug, payload.state, payload.callbackUrl))
    .handle("disableSsoConnection", ({ path }) =>
      Effect.flatMap(Effect.all([Caller, adminOrigin]), ([operator, origin]) => disableSsoConnection(path.slug, operator.subject, origin)))
    .handle("listOutboundMail", ({ urlParams }) => listOutboundMail(urlParams.to))
    // The console's: the public use cases themselves, for the member the console names, so that
    // none of their rules (authorization on the records, the hourly count, the last admin, the
    // outbox event, the mail and its inviter) has a second copy here. No origin: the console logs
    // these itself, with the member's browser address, and provisioning does not log them again.
    .handle("listMembersAs", ({ path, urlParams }) =>
      Effect.flatMap(callerFromRecords(path.tenantId, urlParams.actorSub), (caller) =>
        wholeOrPage(urlParams, () => listMembers(caller), () => listMembersPage(caller, urlParams))))
    .handle("listInvitationsAs", ({ path, urlParams }) =>
      Effect.flatMap(callerFromRecords(path.tenantId, urlParams.actorSub), (caller) =>
        wholeOrPage(urlParams, () => listInvitations(caller), () => listInvitationsPage(caller, urlParams))))
    .handle("inviteAs", ({ path, payload: { actorSub, ...invitation } }) =>
      Effect.flatMap(callerFromRecords(path.tenantId, actorSub), (caller) =>
        createInvitation(caller, invitation).pipe(Effect.tapErrorTag("RateLimited", () => announceRetry(caller)))))
    .handle("revokeInvitationAs", ({ path, payload }) =>
      Effect.flatMap(callerFromRecords(path.tenantId, payload.actorSub), (caller) => revokeInvitation(caller, path.id)))
    .handle("removeMemberAs", ({ path, payload }) =>
      Effect.flatMap(callerFromRecords(path.tenantId, payload.actorSub), (caller) => removeMember(caller, path.userSub)))
    .handle("getSsoConnectionAs", ({ path, urlParams }) =>
      Effect.flatMap(callerFromRecords(path.tenantId, urlParams.actorSub), (caller) => getSsoConnectionAs(caller)))
    .handle("setSsoConnectionAs", ({ path, payload: { actorSub, ...connection } }) =>
      Effect.flatMap(callerFromRecords(path.tenantId, actorSub), (caller) => setSsoConnectionAs(caller, connection)))
    .handle("disableSsoConnectionAs", ({ path, payload }) =>
      Effect.flatMap(callerFromRecords(path.tenantId, payload.actorSub), (caller) => disableSsoConnectionAs(caller))))
