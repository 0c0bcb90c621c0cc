import { HttpApiBuilder } from "@effect/platform"
import { Caller, ProvisioningAdminApi } from "@portfolio/domain"
import { Effect, Redacted } from "effect"
import { listOutboundMail } from "../../usecases/Mail.js"
import { checkSignIn, getAccount } from "../../usecases/SignIn.js"
import { createTenant, findMember, getTenant, listTenantInvitations, provisionSsoMember, resendWelcome } from "../../usecases/Tenants.js"

export const ProvisioningAdminHttpLive = HttpApiBuilder.group(ProvisioningAdminApi, "provisioningAdmin", (handlers) =>
  handlers
    // The operator's assertion names them (`operator:<os user>` from the CLI): the welcome link's inviter.
    .handle("createTenant", ({ payload }) => Effect.flatMap(Caller, (operator) => createTenant(payload, operator.subject)))
    .handle("resendWelcome", ({ path, payload }) => Effect.flatMap(Caller, (operator) => resendWelcome(path.slug, payload.email, operator.subject)))
    .handle("getTenant", ({ path }) => getTenant(path.slug))
    .handle("findMember", ({ path }) => findMember(path.slug, path.email))
    .handle("provisionSsoMember", ({ path, payload }) =>
      provisionSsoMember({ slug: path.slug, ...payload }))
    .handle("listTenantInvitations", ({ path }) => listTenantInvitations(path.slug))
    // Redacted from here on: the password reaches no log, span or error past this point.
    .handle("checkSignIn", ({ payload }) => checkSignIn(payload.email, Redacted.make(payload.password)))
    .handle("getAccount", ({ path }) => getAccount(path.subject))
    .handle("listOutboundMail", ({ urlParams }) => listOutboundMail(urlParams.to)))
