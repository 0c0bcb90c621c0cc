import { HttpApiBuilder } from "@effect/platform"
import { ProvisioningAdminApi } from "@portfolio/domain"
import { listOutboundMail } from "../../usecases/Mail.js"
import { createTenant, findMember, getTenant, listTenantInvitations, provisionSsoMember } from "../../usecases/Tenants.js"

export const ProvisioningAdminHttpLive = HttpApiBuilder.group(ProvisioningAdminApi, "provisioningAdmin", (handlers) =>
  handlers
    .handle("createTenant", ({ payload }) => createTenant(payload))
    .handle("getTenant", ({ path }) => getTenant(path.slug))
    .handle("findMember", ({ path }) => findMember(path.slug, path.email))
    .handle("provisionSsoMember", ({ path, payload }) =>
      provisionSsoMember({ slug: path.slug, ...payload }))
    .handle("listTenantInvitations", ({ path }) => listTenantInvitations(path.slug))
    .handle("listOutboundMail", ({ urlParams }) => listOutboundMail(urlParams.to)))
